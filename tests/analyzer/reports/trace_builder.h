// TraceBuilder: small traces with known answers for report tests.
//
// Writes a real trace file through format::Writer. Symbols travel embedded,
// as the recorder embeds them: each module is an ObjectSymbols with synthetic
// symbols and one executable segment whose vaddr equals its file offset, plus
// a Mapping at that same address in the fake process, so a runtime address is
// its ELF address and `function("parse")` resolves back to "parse" in any
// symbolizer that honours segments and mappings. Kernel functions are
// embedded kernel symbols.
//
// Times given to the builder are ns from the trace start (kStartNs is added).
// Stacks are leaf first, by function name; each frame is the function's start
// + kFrameOffset (a return address inside it).
//
//   TraceBuilder b;
//   b.thread(101, "worker");
//   auto hot = b.stack({"leaf", "mid", "main"});
//   b.sample(1000, 101, hot);
//   b.sched(2000, /*cpu=*/0, /*prev=*/101, /*state=*/1, /*next=*/0, hot);
//   auto path = b.write();               // Result<std::string>, removed by ~TraceBuilder
//   ASSERT_TRUE(path) << path.error().message();
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/event_kinds.h"
#include "format/metadata.h"
#include "format/writer.h"

namespace incise::analyzer::testing {

class TraceBuilder {
 public:
  static constexpr uint32_t kPid = 100;
  static constexpr uint64_t kStartNs = 1'000'000'000;
  static constexpr uint64_t kFrameOffset = 0x10;
  static constexpr uint64_t kFunctionSize = 0x100;

  TraceBuilder();
  ~TraceBuilder();
  TraceBuilder(const TraceBuilder&) = delete;
  TraceBuilder& operator=(const TraceBuilder&) = delete;

  // Declares a function (once per name) in `module` ("app" → /fake/app) and
  // returns its start address. stack() declares unknown names in "app".
  uint64_t function(const std::string& name, const std::string& module = "app");
  // A kernel function, embedded as a kernel symbol.
  uint64_t kernelFunction(const std::string& name);
  // The address stack() uses for `name`'s frames.
  uint64_t frameAddress(const std::string& name);

  // A stack handle for frames given leaf first; 0 for an empty list.
  uint64_t stack(const std::vector<std::string>& leaf_first);
  // A stack of raw addresses (e.g. one that resolves to nothing).
  uint64_t rawStack(const std::vector<uint64_t>& leaf_first);

  void thread(uint32_t tid, const std::string& comm, uint32_t pid = kPid, uint64_t time = 0);
  void process(uint32_t pid, const std::string& comm, uint64_t time = 0);
  // A thread of `pid` the recorder did not describe (as a bystander of a
  // -p trace is not): rows give its pid, the metadata has nothing of it.
  void unnamedThread(uint32_t tid, uint32_t pid) { unnamed_[tid] = pid; }

  // goid: a Go program's goroutine (0: none).
  void sample(uint64_t time, uint32_t tid, uint64_t stack, uint32_t cpu = 0, uint64_t weight = 1,
              uint32_t pid = kPid, uint64_t goid = 0);
  // prev_state 0 = preempted, else blocked. Pids are taken from thread(); 0 = idle.
  void sched(uint64_t time, uint32_t cpu, uint32_t prev_tid, uint64_t prev_state, uint32_t next_tid,
             uint64_t prev_stack = 0);
  void wakeup(uint64_t time, uint32_t waker_tid, uint32_t wakee_tid, uint32_t target_cpu = 0,
              uint64_t stack = 0, uint32_t cpu = 0);
  // release 0 = not seen.
  void lock(uint32_t tid, uint64_t address, uint64_t request, uint64_t acquired, uint64_t release,
            uint64_t stack, uint64_t flags = 0, uint32_t releaser_tid = 0,
            format::LockKind kind = format::LockKind::kMutex);
  void fault(uint64_t time, uint32_t tid, uint64_t address, uint64_t stack, uint32_t cpu = 0);
  // A sampled allocation (--alloc) standing for `weight` bytes, and the
  // free of a sampled block (by any thread of the process).
  void allocation(uint64_t time, uint32_t tid, uint64_t address, uint64_t size, uint64_t weight,
                  uint64_t stack);
  void freed(uint64_t time, uint32_t tid, uint64_t address);
  // A timed call (format::Latency) of probe `probe` of `source`, and the
  // probe's name in the metadata (latencyProbe, once per probe).
  void latency(uint64_t time, uint32_t tid, format::LatencySource source, uint64_t probe,
               uint64_t duration, uint64_t stack = 0);
  void latencyProbe(format::LatencySource source, uint64_t probe, const std::string& name);
  // Calls of `probe` counted in one log2 bucket (format::LatencyHistogram,
  // as --aggregate writes them) over [time, end_time).
  void latencyBucket(uint64_t time, uint64_t end_time, uint32_t pid, format::LatencySource source,
                     uint64_t probe, uint64_t bucket, uint64_t count, uint64_t total_ns,
                     uint64_t max_ns);
  void lost(uint64_t time, format::LostSource source, uint64_t count);
  // A --context the header names (slot: the order of the calls), and a
  // thread's value read first at `time` after its previous one was last
  // read at `since` (0: the thread's first read); times from the start.
  void context(const std::string& name, const std::string& symbol);
  void contextChange(uint64_t time, uint32_t tid, uint64_t slot, uint64_t value,
                     uint64_t since = 0);
  void processEvent(uint64_t time, format::ProcessEventType type, uint32_t pid, uint32_t tid,
                    uint64_t peer_pid = 0, uint64_t peer_tid = 0);

  // The header's sampling event ("page-faults"; default cpu-clock), and the
  // --counters it names (slot i is column counterI of every sample).
  void setSampleEvent(std::string event) { sample_event_ = std::move(event); }
  void setCounters(std::vector<std::string> counters) { counters_ = std::move(counters); }
  // The header's --alloc mean bytes between samples (default 0: not said).
  void setAllocSampleBytes(uint64_t bytes) { alloc_sample_bytes_ = bytes; }
  // A sample carrying counts of the counters, in slot order (at most 4).
  void countedSample(uint64_t time, uint32_t tid, uint64_t stack,
                     const std::vector<uint64_t>& counts);

  // Trace end, ns from start; default: the last event time + 1.
  void setEnd(uint64_t time) { end_ = time; }
  // The header's recorded lock mode ("all", "contended"; default "off").
  void setLockMode(std::string mode) { lock_mode_ = std::move(mode); }
  // Whether the header says scheduler events were recorded (default true).
  void setSchedRecorded(bool recorded) { sched_recorded_ = recorded; }
  // What the recorder followed, as its header says it ("pid 100", "all";
  // default empty: not said, every thread counts as followed).
  void setTarget(std::string target) { target_ = std::move(target); }
  // Rows per chunk (small values make many chunks, for the parallel decoder).
  void setRowsPerChunk(uint32_t rows) { rows_per_chunk_ = rows; }

  // Writes the file (once) and returns its path.
  Result<std::string> write();

 private:
  struct Module {
    uint64_t base = 0;
    uint64_t next = 0;
    std::vector<format::Symbol> symbols;
  };
  uint32_t pidOfThread(uint32_t tid) const;
  void touch(uint64_t time) { last_time_ = std::max(last_time_, time); }

  std::map<std::string, Module> modules_;
  std::map<std::string, uint64_t> functions_;
  std::vector<format::KernelSymbol> kernel_symbols_;
  std::vector<std::vector<uint64_t>> stacks_;  // handle - 1 -> frames
  std::vector<format::Process> processes_;
  std::vector<format::Thread> threads_;
  std::vector<format::CpuSample> samples_;
  std::vector<format::SchedSwitch> switches_;
  std::vector<format::Wakeup> wakeups_;
  std::vector<format::LockInterval> locks_;
  std::vector<format::PageFault> faults_;
  std::vector<format::Allocation> allocations_;
  std::vector<format::Free> frees_;
  std::vector<format::Latency> latencies_;
  std::vector<format::LatencyHistogram> latency_buckets_;
  std::vector<format::LatencyProbe> latency_probes_;
  std::vector<format::Lost> lost_;
  std::vector<format::ProcessEvent> process_events_;
  std::vector<format::ContextVariable> contexts_;
  std::string sample_event_ = "cpu-clock";
  uint64_t alloc_sample_bytes_ = 0;
  std::vector<std::string> counters_;
  std::vector<format::ContextChange> context_changes_;
  uint64_t last_time_ = 0;
  uint64_t end_ = 0;
  uint32_t rows_per_chunk_ = 65536;
  std::string lock_mode_ = "off";
  bool sched_recorded_ = true;
  std::string target_;
  std::map<uint32_t, uint32_t> unnamed_;  // tid -> pid
  std::string path_;
};

// Streams a large CPU-sample trace for benchmarks: `samples` samples over
// `threads` threads, drawn from `distinct_stacks` stacks of `depth` frames
// (Zipf-like: low stack ids are hotter), `functions` distinct functions.
struct SyntheticProfile {
  uint64_t samples = 1'000'000;
  uint32_t threads = 8;
  uint32_t distinct_stacks = 5000;
  uint32_t depth = 16;
  uint32_t functions = 2000;
  // Non-zero: a context `req` (--context req=request_id) whose value each
  // thread changes every this many of its samples (request ids 1, 2, ...
  // across threads, 0 between two), read at the samples.
  uint64_t samples_per_request = 0;
};
Status writeSyntheticProfile(const std::string& path, const SyntheticProfile& profile);

}  // namespace incise::analyzer::testing
