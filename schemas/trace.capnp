# The trace file's self-describing parts: header, metadata deltas, chunk
# headers and footer. Column payloads are not Cap'n Proto: they are raw codec
# output (see format/codecs/). Ordinals and enum values are frozen: add fields
# at the end, never renumber, never reuse.
@0x817ce2851f6ab04d;

$import "/capnp/c++.capnp".namespace("incise::schema");

# 2.8: --context NAME=[OBJECT:]SYMBOL; its slot is its index in the list.
struct ContextVariable {
  name @0 :Text;
  object @1 :Text;                   # as given; empty: the target's executable
  symbol @2 :Text;
  reading @3 :Text;                  # 2.11: how the value was read: empty (the integer), "otel-trace-id", "otel-span-id"
}

struct RecordOptions {
  sampleFrequencyHz @0 :UInt32;     # samples per second asked for; 0 when sampling was off or -c set samplePeriod
  stackMode @1 :Text;                # "fp", "dwarf", "none"
  lockMode @2 :Text;                 # "contended", "all", "off"
  schedEnabled @3 :Bool;
  pageFaultsEnabled @4 :Bool;
  target @5 :Text;                   # what was recorded: "-a", "-p 12,13", "-- cmd", "--cgroup path"
  lockProbes @6 :List(Text);         # BIN:ACQUIRE:RELEASE as given
  dwarfStackBytes @7 :UInt32;        # bytes of user stack copied per sample in dwarf mode
  sampleEvent @8 :Text;              # perf's name: "cpu-clock", "cycles", "page-faults", ...
  latencyTraces @9 :List(Text);      # 2.2: --trace BIN:FUNC[+OFFSET] as given
  latencySyscalls @10 :Text;         # 2.2: --syscalls as given; empty when off
  latencyBlockIo @11 :Bool;          # 2.2: --block-io
  latencyIoUring @12 :Bool;          # 2.2: --io-uring
  latencyAggregate @13 :Bool;        # 2.2: --aggregate: histograms counted in BPF, no rows
  latencySample @14 :UInt32;         # 2.2: --sample N (1 in N calls kept); 0 or 1: every call
  contexts @15 :List(ContextVariable);  # 2.8: --context, in command-line order
  samplePeriod @16 :UInt64;          # 2.9: -c N, a sample every N events; 0: by frequency
  counters @17 :List(Text);          # 2.9: --counters, perf's names; slot i is column counterI
  allocSampleBytes @18 :UInt64;      # 2.10: --alloc: mean bytes between allocation samples; 0: off
}

struct Header {
  formatMajor @0 :UInt16;            # a reader refuses a newer major version
  formatMinor @1 :UInt16;            # additive changes only
  host @2 :Text;
  kernelRelease @3 :Text;
  bootId @4 :Text;
  clockSource @5 :Text;              # timestamps in the file use this clock, in ns
  startWallNs @6 :UInt64;            # CLOCK_REALTIME at start
  startMonoNs @7 :UInt64;            # the same instant in clockSource
  commandLine @8 :List(Text);        # the recorder's argv
  options @9 :RecordOptions;
  recorderVersion @10 :Text;
  cpuCount @11 :UInt32;
  pageSize @12 :UInt32;
}

# One column inside a chunk block's payload.
struct ColumnRef {
  id @0 :UInt16;                     # the kind's column number (format/event_kinds.h)
  encoding @1 :UInt8;                # format::Encoding (varint, delta, ...)
  compression @2 :UInt8;             # format::Compression (none, zstd)
  rawBytes @3 :UInt32;               # size after encoding, before compression
  storedBytes @4 :UInt32;            # size stored in the payload
  offset @5 :UInt32;                 # from the start of the column area
}

# The first part of every chunk block (event rows or stack-table rows).
struct ChunkHeader {
  kind @0 :UInt8;                    # format::EventKind, or 0x80 for the stack table
  rows @1 :UInt32;
  minTime @2 :UInt64;
  maxTime @3 :UInt64;
  columns @4 :List(ColumnRef);
  firstStackId @5 :UInt64;           # stack-table chunks: id of the first row
  rowOrder @6 :UInt8;                # format::RowOrder: 0 as appended, 1 grouped by cpu (2.0)
}

struct Symbol {
  address @0 :UInt64;                # ELF virtual address (st_value)
  size @1 :UInt64;
  name @2 :Text;                     # as in the ELF file, mangled
}

struct Segment {                     # a PT_LOAD program header, to map file offsets to vaddrs
  vaddr @0 :UInt64;
  fileOffset @1 :UInt64;
  fileSize @2 :UInt64;
  memSize @3 :UInt64;
  flags @4 :UInt32;                  # PF_X / PF_W / PF_R
}

struct ObjectSymbols {
  buildId @0 :Data;                  # GNU build-id bytes; empty when the object has none
  path @1 :Text;                     # path as mapped on the recording host
  symbols @2 :List(Symbol);
  segments @3 :List(Segment);
  elfType @4 :UInt16;                # ET_EXEC or ET_DYN
  debugLink @5 :Text;                # .gnu_debuglink file name, if any
  ehFrame @6 :Data;                  # reserved for dwarf mode: .eh_frame copy
  ehFrameHdr @7 :Data;
  ehFrameVaddr @8 :UInt64;
  ehFrameHdrVaddr @9 :UInt64;
  symbolTable @10 :Data;             # 2.0: the symbols as one blob (format/symbol_table_blob.h); list empty
}

struct Process {
  pid @0 :UInt32;
  ppid @1 :UInt32;
  comm @2 :Text;
  cmdline @3 :List(Text);
  time @4 :UInt64;                   # when this information became true
}

struct Thread {
  tid @0 :UInt32;
  pid @1 :UInt32;
  comm @2 :Text;
  time @3 :UInt64;
}

struct Mapping {
  pid @0 :UInt32;
  start @1 :UInt64;
  end @2 :UInt64;
  fileOffset @3 :UInt64;
  path @4 :Text;
  buildId @5 :Data;
  prot @6 :UInt32;                   # PROT_READ|PROT_WRITE|PROT_EXEC
  time @7 :UInt64;                   # when the mapping was seen or created
}

struct KernelSymbol {
  address @0 :UInt64;
  name @1 :Text;
  module @2 :Text;                   # empty for vmlinux
}

struct PerfMapEntry {
  start @0 :UInt64;
  size @1 :UInt64;
  name @2 :Text;
}

# Entries appended to /tmp/perf-PID.map since the previous snapshot of the
# same pid. A later entry overrides an earlier one at the same address.
struct PerfMapSnapshot {
  pid @0 :UInt32;
  time @1 :UInt64;
  entries @2 :List(PerfMapEntry);
}

# 2.2: what a latency row's `probe` stands for, per source (format::LatencySource).
struct LatencyProbe {
  source @0 :UInt8;                  # format::LatencySource
  id @1 :UInt64;                     # the rows' probe value
  name @2 :Text;                     # "parse_request", "read", "vda", "READV"
  object @3 :Text;                   # functions: the binary probed; else empty
  offset @4 :UInt64;                 # functions: offset from the symbol (BIN:FUNC+OFFSET)
  isGo @5 :Bool;                     # functions: probed at its RET instructions (Go)
}

struct MetadataDelta {
  time @0 :UInt64;
  processes @1 :List(Process);
  threads @2 :List(Thread);
  mappings @3 :List(Mapping);
  objects @4 :List(ObjectSymbols);
  kernelSymbols @5 :List(KernelSymbol);
  perfMaps @6 :List(PerfMapSnapshot);
  notes @7 :List(Text);              # recorder warnings a reader should show (degraded sources)
  kernelSymbolTable @8 :Data;        # 2.0: kernel symbols as one blob (format/symbol_table_blob.h); list empty
  latencyProbes @9 :List(LatencyProbe);  # 2.2
}

struct ChunkIndexEntry {
  offset @0 :UInt64;                 # of the block header
  length @1 :UInt32;                 # payload bytes
  blockType @2 :UInt8;               # format::BlockType
  kind @3 :UInt8;
  rows @4 :UInt32;
  minTime @5 :UInt64;
  maxTime @6 :UInt64;
}

struct KindTotal {
  kind @0 :UInt8;
  rows @1 :UInt64;
}

struct Footer {
  chunks @0 :List(ChunkIndexEntry);
  totals @1 :List(KindTotal);
  endMonoNs @2 :UInt64;
  stackCount @3 :UInt64;
}
