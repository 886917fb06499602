// What travels in the trace besides events, so the analyzer needs nothing
// from the recording host: the header and the metadata (processes, threads,
// mappings with build-ids, symbol tables, kernel symbols, JIT perf maps).
//
// These are plain structs; the on-disk form is schemas/trace.capnp and the
// conversion lives in format/metadata_codec.cc. The recorder emits
// MetadataDelta values as it learns things; the reader merges them, in file
// order, into one Metadata.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace incise::format {

// 1.1: cpu samples may carry user registers and a user stack copy (kBytes).
// 1.2: metadata payloads compressed.
// 2.0: packed chunk headers and footer, kConstant and kPeriodDelta columns,
//      cpu-sample rows grouped by cpu (format/row_order.h), symbol blobs,
//      stack-table frames as fixed64. A new major because a 1.x reader would
//      take the packed headers for damage; with 2 it refuses the file by name
//      ("newer than this reader understands ... upgrade incise"). This reader
//      reads 1.0-1.2 and 2.x.
// 2.1: small chunks merged after the fact (format/region_merge.h), with the
//      kRegionCopy block a file keeps only if the writer died mid-merge. A
//      2.0 reader reads 2.1 files; one killed mid-merge it salvages with that
//      region's rows twice (it resynchronises into the copy's blocks).
// 2.2: lock rows gain futex_op, futex_value, object, holder_tid,
//      holder_state and releaser_stack_id (contended waits are seen at their
//      blocking switch, with the owner read from the lock); older files read
//      with those columns 0.
// 2.3: latency rows and histograms (event kinds 8 and 9), the names of what
//      they timed (MetadataDelta::latency_probes) and the latency options;
//      lock rows gain goid and releaser_goid (Go mutex waits: the waiting
//      goroutine and the one whose unlock released it). Older readers skip
//      the new kinds and fields; older files read with those columns 0.
// 2.4: cpu samples gain goid (the goroutine a Go program's thread ran);
//      older files read it as 0. Block summary rows (event kind 10): the
//      short off-CPU intervals --sched-min-block leaves unwritten, counted
//      per thread, state and stack; older readers skip the kind.
// 2.5: switch rows gain goid and next_goid (the goroutine prev's thread
//      left and the one next's thread resumes); a futex wait's lock row
//      carries its thread's goroutine in goid. Older files read them as 0.
// 2.6: lock rows of kind 7, condvar (Go's sync.Cond.Wait, with its
//      signaller as releaser), and Go RWMutex waits as rwlock-read and
//      rwlock-write rows; an older reader names kind 7 "unknown".
// 2.7: switch rows gain elided (which halves belong to a short sleep
//      counted in a block summary, and whether rows of that cpu before it
//      were left unwritten). Older files read it as 0: every half real.
inline constexpr uint16_t kFormatMajor = 2;
// 2.8: --context: context-change rows (event kind 11) and the variables
//      they read (RecordOptions::contexts); lost rows of sources 8 and 9
//      (context rows dropped, context reads that failed). Older readers skip
//      the kind and the field.
// 2.9: -e EVENT, -c N and --counters: the sample period of -c
//      (RecordOptions::sample_period), the counters' names
//      (RecordOptions::counters) and their per-sample counts (cpu sample
//      columns counter0..counter3); older files read no counters. Columns
//      stored against a base column of their row (kBaseDelta: pids against
//      tids, a wait's end against its start; event_kinds.h baseColumn): a
//      2.8 reader stops at such a column ("unknown encoding 7"); this reader
//      reads every older file unchanged.
//      Also lock_release rows (event kind 12: Go sync.Mutex slow unlocks) and
//      the lock flag kLockGoSlowPath on Go lockSlow rows. Older readers
//      skip the kind and ignore the flag.
// 2.10: --alloc: sampled allocations and the frees of sampled blocks
//      (event kinds 13 and 14), lost rows of source 10, and the mean bytes
//      between samples (RecordOptions::alloc_sample_bytes). Older readers
//      skip the kinds and the field.
// 2.11: --context otel keeps the whole trace id: its first 8 bytes in the
//      change rows' value_high column, and each context says how it was
//      read (ContextVariable::reading). Older readers ignore both; older
//      files read value_high as 0 and name otel's reading by its symbol.
// 2.12: wait summary rows (event kind 15): the short condvar and semaphore
//      futex waits --sched-min-block leaves unwritten, counted per thread,
//      word, stack, waker and log2 bucket; older readers skip the kind.
inline constexpr uint16_t kFormatMinor = 12;

// --context NAME=[OBJECT:]SYMBOL (format 2.8): a thread-local variable whose
// value context-change rows carry; its slot is its index in the list.
struct ContextVariable {
  std::string name;    // "request"
  std::string object;  // as given; empty = the target's executable
  std::string symbol;  // "request_id"
  // 2.11: how the value was read: kContextReadingInteger (the variable
  // itself), kContextReadingOtelTraceId or kContextReadingOtelSpanId.
  std::string reading;
};
inline constexpr std::string_view kContextReadingInteger = "";
inline constexpr std::string_view kContextReadingOtelTraceId = "otel-trace-id";
inline constexpr std::string_view kContextReadingOtelSpanId = "otel-span-id";

struct RecordOptions {
  uint32_t sample_frequency_hz = 0;
  std::string stack_mode = "fp";  // fp | dwarf | none
  std::string lock_mode = "off";  // contended | all | off
  bool sched_enabled = false;
  bool page_faults_enabled = false;
  std::string target;
  std::vector<std::string> lock_probes;
  uint32_t dwarf_stack_bytes = 0;
  std::string sample_event = "cpu-clock";
  // 2.2: latency sources.
  std::vector<std::string> latency_traces;  // --trace BIN:FUNC[+OFFSET]
  std::string latency_syscalls;             // --syscalls LIST|all; empty = off
  bool latency_block_io = false;
  bool latency_io_uring = false;
  bool latency_aggregate = false;
  uint32_t latency_sample = 0;            // --sample N; 0 or 1 = every call
  std::vector<ContextVariable> contexts;  // 2.8
  uint64_t sample_period = 0;             // 2.9: -c N; 0 = sampled by frequency
  std::vector<std::string> counters;      // 2.9: --counters; slot i is column counterI
  uint64_t alloc_sample_bytes = 0;        // 2.10: --alloc's mean bytes per sample; 0 = off
};

// A clock's samples stand for time (their period, ns) and weigh alike in a
// profile; any other event's samples stand for their period in events.
// Files before 2.9 name cpu-clock or cycles; older ones none (cpu-clock).
inline bool sampleEventIsClock(const RecordOptions& options) {
  return options.sample_event.empty() || options.sample_event == "cpu-clock" ||
         options.sample_event == "task-clock";
}

struct Header {
  uint16_t format_major = kFormatMajor;
  uint16_t format_minor = kFormatMinor;
  std::string host;
  std::string kernel_release;
  std::string boot_id;
  std::string clock_source = "CLOCK_MONOTONIC";
  uint64_t start_wall_ns = 0;
  uint64_t start_mono_ns = 0;
  std::vector<std::string> command_line;
  RecordOptions options;
  std::string recorder_version;
  uint32_t cpu_count = 0;
  uint32_t page_size = 4096;
};

struct Symbol {
  uint64_t address = 0;  // ELF virtual address
  uint64_t size = 0;
  std::string name;  // mangled, as in the file
};

struct Segment {
  uint64_t vaddr = 0;
  uint64_t file_offset = 0;
  uint64_t file_size = 0;
  uint64_t mem_size = 0;
  uint32_t flags = 0;  // PF_X | PF_W | PF_R
};

struct ObjectSymbols {
  std::string build_id;  // raw bytes
  std::string path;
  std::vector<Symbol> symbols;
  std::vector<Segment> segments;
  uint16_t elf_type = 0;
  std::string debug_link;
  std::string eh_frame;  // dwarf mode
  std::string eh_frame_hdr;
  uint64_t eh_frame_vaddr = 0;
  uint64_t eh_frame_hdr_vaddr = 0;
};

struct Process {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string comm;
  std::vector<std::string> cmdline;
  uint64_t time = 0;
};

struct Thread {
  uint32_t tid = 0;
  uint32_t pid = 0;
  std::string comm;
  uint64_t time = 0;
};

struct Mapping {
  uint32_t pid = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t file_offset = 0;
  std::string path;
  std::string build_id;
  uint32_t prot = 0;  // PROT_READ | PROT_WRITE | PROT_EXEC
  uint64_t time = 0;
};

struct KernelSymbol {
  uint64_t address = 0;
  std::string name;
  std::string module;
};

struct PerfMapEntry {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string name;
};

struct PerfMapSnapshot {
  uint32_t pid = 0;
  uint64_t time = 0;
  std::vector<PerfMapEntry> entries;
};

// What a latency row's `probe` names (format 2.3), per LatencySource.
struct LatencyProbe {
  uint8_t source = 0;  // format::LatencySource
  uint64_t id = 0;
  std::string name;
  std::string object;  // functions: the binary
  uint64_t offset = 0;
  bool is_go = false;
};

// One batch of facts learned at `time`. All vectors may be empty.
struct MetadataDelta {
  uint64_t time = 0;
  std::vector<Process> processes;
  std::vector<Thread> threads;
  std::vector<Mapping> mappings;
  std::vector<ObjectSymbols> objects;
  std::vector<KernelSymbol> kernel_symbols;
  std::vector<PerfMapSnapshot> perf_maps;
  std::vector<std::string> notes;
  std::vector<LatencyProbe> latency_probes;

  bool empty() const {
    return processes.empty() && threads.empty() && mappings.empty() && objects.empty() &&
           kernel_symbols.empty() && perf_maps.empty() && notes.empty() && latency_probes.empty();
  }
};

// Every delta of a trace, concatenated in file order (so in time order).
using Metadata = MetadataDelta;

}  // namespace incise::format
