// RecordConfig: the parsed `incise-record` command line, read by every
// source and by the main loop. Parsing and validation live in options.cc.
//
//   Result<RecordConfig> config = parseOptions(argc, argv);
//   if (config->target_kind == TargetKind::kPids) ...
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/metadata.h"

namespace incise::recorder {

enum class TargetKind {
  kPids,     // -p PID[,PID...]
  kAll,      // -a
  kCgroup,   // --cgroup PATH
  kCommand,  // -- CMD ARGS...
};

enum class LockMode { kOff, kContended, kAll };

// --lock-calls: how mode `all` records the lock calls of a command it starts.
enum class LockCalls { kPreload, kUprobes };

// --sched-stacks: which scheduler events carry stacks (bpf/events.h).
//   kBlocked: switches where the thread blocks (kernel + user), wakers (user)
//   kAll:     also preemptions (user stack) and wakers' kernel stacks
enum class SchedStacks { kOff, kBlocked, kAll };

// --lock-probe BIN:ACQUIRE:RELEASE
struct LockProbeSpec {
  std::string binary;
  std::string acquire_symbol;
  std::string release_symbol;
};

// --context NAME=[BIN:]SYMBOL (recorder/context/context_spec.h)
// How a context's variable is read (bpf/context.h CONTEXT_READ_*).
enum class ContextReading : uint8_t {
  kInteger = 0,      // the variable is the value (1, 2, 4 or 8 bytes)
  kOtelTraceId = 1,  // --context otel: the record it points to, its trace id (whole)
  kOtelSpanId = 2,   // --context otel: the record's span id
};

// What the trace's header says of a reading (format::ContextVariable::reading).
inline std::string_view contextReadingName(ContextReading reading) {
  switch (reading) {
    case ContextReading::kOtelTraceId:
      return format::kContextReadingOtelTraceId;
    case ContextReading::kOtelSpanId:
      return format::kContextReadingOtelSpanId;
    case ContextReading::kInteger:
      break;
  }
  return format::kContextReadingInteger;
}

struct ContextSpec {
  std::string name;
  std::string binary;  // empty: the target's executable
  std::string symbol;
  ContextReading reading = ContextReading::kInteger;
};

struct RecordConfig {
  std::string output = "incise.trace";
  uint32_t frequency_hz = 99;
  // -e EVENT: perf's name of the sampling event (recorder/perf_event_names.h);
  // empty: cycles where a PMU can sample, else cpu-clock.
  std::string sample_event;
  // -c N: a sample every N events (ns for a clock) instead of -F's
  // frequency; 0 = -F.
  uint64_t sample_period = 0;
  // --counters LIST: software counters grouped under the sampling event and
  // read with every sample, as perf names them, at most MAX_COUNTERS.
  std::vector<std::string> counters;
  bool stacks = true;
  // -g cfi | fp | dwarf[=BYTES] | hybrid[=BYTES]: cfi unwinds user stacks in
  // the kernel from tables built from each object's .eh_frame
  // (recorder/metadata/unwind_table_loader.h); dwarf and hybrid keep the user
  // registers and `user_stack_bytes` of user stack per cpu sample and embed
  // each hit object's .eh_frame (recorder/metadata/eh_frame_collector.h).
  std::string stack_mode = "cfi";
  uint32_t user_stack_bytes = 0;

  TargetKind target_kind = TargetKind::kAll;
  std::vector<uint32_t> pids;        // kPids
  std::string cgroup_path;           // kCgroup
  std::vector<std::string> command;  // kCommand: argv of the command

  double duration_seconds = 0;  // 0 = until stopped (or the command exits)
  LockMode lock_mode = LockMode::kContended;
  LockCalls lock_calls = LockCalls::kPreload;
  std::vector<LockProbeSpec> lock_probes;
  bool sched = true;
  SchedStacks sched_stacks = SchedStacks::kBlocked;
  // --sched-min-block: off-CPU intervals shorter than this get no switch or
  // wake-up rows, only a count per thread, state and stack
  // (recorder/sources/short_blocks.h), which keeps thread states and off-CPU time
  // per stack whole; 0 = every row.
  uint64_t sched_min_block_ns = 1'000'000;
  bool page_faults = false;
  // --alloc: allocations sampled in process by libincise-preload.so, one
  // every this many bytes on average (--alloc-rate); 0 = off.
  uint64_t alloc_sample_bytes = 0;
  // --context: thread-local variables read at every event (bpf/context.bpf.h).
  std::vector<ContextSpec> contexts;
  // Latency sources: --trace BIN:FUNC[+OFFSET] (as given, checked by
  // parseFunctionProbe), --syscalls LIST|all (empty = off), --block-io,
  // --io-uring; --aggregate counts log2 histograms in BPF instead of rows,
  // --sample N keeps 1 call in N.
  std::vector<std::string> trace_functions;
  std::string syscalls;
  bool block_io = false;
  bool io_uring = false;
  bool latency_aggregate = false;
  uint32_t latency_sample = 1;
  uint64_t max_size_bytes = 0;  // 0 = unlimited
  bool verbose = false;
  bool bpf_stats = false;  // --bpf-stats: print each BPF program's run count and time

  // Not on the command line: sizes a test or a benchmark may tune.
  // Ring buffer of each source, a power of two; cpu samples take 2x, the
  // scheduler (the busiest: 1/3 of its events were lost with 2 MiB under a
  // switch storm on a loaded box) and locks in mode `all` 4x (ringBytesFor).
  // The kernel maps a ring's data pages twice (for wrap-around), so a ring
  // counts twice in the recorder's RSS once it has wrapped: by default
  // 4 + 8 + 2 MiB (cpu samples, scheduler, locks).
  uint32_t ring_buffer_bytes = 1u << 20;
  uint32_t page_fault_period = 1;  // --page-faults: record every Nth fault
  std::vector<std::string> argv;   // the recorder's own command line, for the header
};

// Whether `--locks all` records a started command's lock calls in process,
// through libincise-preload.so (recorder/preload_library.h), instead of uprobes.
inline bool locksThroughPreload(const RecordConfig& config) {
  return config.lock_mode == LockMode::kAll && config.lock_calls == LockCalls::kPreload;
}
// Whether a command the recorder starts runs with libincise-preload.so: the
// one place that decides it (its lock calls, or its allocations sampled).
inline bool wantsPreload(const RecordConfig& config) {
  return config.target_kind == TargetKind::kCommand &&
         (locksThroughPreload(config) || config.alloc_sample_bytes != 0);
}

std::string lockModeName(LockMode mode);
std::string schedStacksName(SchedStacks mode);

// The ring size of a source: config.ring_buffer_bytes times `scale`.
inline uint32_t ringBytesFor(const RecordConfig& config, uint32_t scale) {
  return config.ring_buffer_bytes * scale;
}
std::string targetDescription(const RecordConfig& config);

}  // namespace incise::recorder
