// FleetTrace: one trace turned into the rows of the fleet tables
// (fleet_schema.h).
//
// Samples carry the --context values their thread held (read from each
// context's timeline, analyses/context/trace_context_timelines.h), so the
// fleet filters them as --where does locally.
//
// Stacks are named the way `incise top`/`diff` name them (StackNamer, by
// function; a stack without frames is "[no stack]"), and keyed by a hash of
// their frames' content, so the same call path from any host and any trace
// is one stacks row. Sampled allocations (--alloc) are summed per site as
// `incise diff` has them (namedAllocSites merged by site), each with its
// largest call path's names. Samples are counted per (1-second bucket, pid, thread,
// stack), streamed second by second; off-CPU spans are summed per (stack,
// reason) by open(). Lock intervals stay one row each, and lock-site times
// are the values `incise diff` takes its lock percentiles from (LockRowStream
// and LockSites, as readLockStats): one wait per acquisition, one hold per
// critical section (recorded, or inferred from wakes in contended mode),
// each with its site's name; latency times are the calls `incise latency`
// counts, named as it names them. Streamed rows go to the caller (the push sends
// them in batches) and are never all held; the stacks they name join
// rows().stacks and rows().frames, so send those after them. The trace id is the XXH3-64 of the
// file's bytes, the same id the local archive gives it, so pushing the same file twice is
// detectable.
//
// Memory: bounded by distinct stacks, one second's (thread, stack) cells,
// and what LockRowStream keeps (per lock and per wait in progress).
//
//   auto trace = FleetTrace::open("app.trace", /*progress=*/true);
//   (*trace)->rows().trace_id;         // "3f9c0a1b2c3d4e5f"
//   (*trace)->forEachLockRow([&](const FleetLockRow& row) { send(row); });
//   (*trace)->rows().stacks.size();    // every stack named so far
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/analyses/alloc/alloc_sites.h"
#include "analyzer/diff/trace_facts.h"
#include "analyzer/model/context_timeline.h"
#include "base/status.h"

namespace incise::analyzer {

struct FleetFrame {
  uint64_t key = 0;
  std::string name, module, build_id;
};

struct FleetStack {
  uint64_t key = 0;
  std::vector<uint64_t> frame_keys;  // root first
  std::vector<std::string> names;    // root first
};

struct FleetSampleCell {
  uint32_t second = 0, pid = 0, tid = 0;
  uint64_t stack_key = 0;
  uint64_t samples = 0, weight = 0;
  // The context values the samples' thread held (--context), by name; a
  // context whose value was unknown there is left out.
  std::vector<std::string> context_names;
  std::vector<uint64_t> context_values;
};

struct FleetLockRow {
  uint64_t time_ns = 0, wait_ns = 0, hold_ns = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t address = 0;
  std::string lock_kind;
  uint32_t flags = 0;
  uint64_t stack_key = 0;
  uint32_t releaser_tid = 0;
};

struct FleetLockSiteTime {
  std::string site;     // LockSites::name
  std::string context;  // LockSites::context: "site <- caller"
  bool hold = false;    // else a wait
  uint64_t ns = 0;
  bool inferred = false;  // a hold inferred from a wake (contended mode)
};

// One timed call, or (a trace recorded with --aggregate) one log2 bucket of
// calls counted in BPF. `kind` and `name` are `incise latency`'s
// (latencySourceName, LatencyNames), so traces whose probe numbers differ
// meet by name.
struct FleetLatencyTime {
  std::string kind, name;
  uint8_t bucket = 0;  // log2Bucket of the call's duration, or the counted bucket
  uint64_t ns = 0;     // the call's duration; 0 for a counted bucket
  uint64_t calls = 0;  // calls the row stands for (--sample N: N; a bucket: its count)
  uint64_t total_ns = 0, max_ns = 0;
  bool counted = false;  // a bucket counted in BPF: no per-call durations
};

struct FleetOffCpuRow {
  uint64_t stack_key = 0;
  std::string reason;  // "preempted", or the blocked task state ("S", "D", "state 0x...")
  uint64_t ns = 0, count = 0;
};

// The aggregated rows of one trace.
struct FleetTraceRows {
  std::string trace_id;
  TraceFacts facts;
  uint64_t cpu_samples = 0;              // CPU samples forEachSampleCell counted (after it ran)
  std::map<std::string, uint64_t> lost;  // source -> events the kernel dropped
  std::vector<FleetFrame> frames;
  std::vector<FleetStack> stacks;
  std::vector<FleetOffCpuRow> off_cpu;
  std::vector<AllocSite> alloc_sites;  // merged by site
  uint64_t rowCount() const {
    return frames.size() + stacks.size() + off_cpu.size() + alloc_sites.size() + 1;
  }
};

class Trace;
class FleetStackKeys;

class FleetTrace {
 public:
  static Result<std::unique_ptr<FleetTrace>> open(const std::string& path, bool progress);
  ~FleetTrace();
  FleetTrace(const FleetTrace&) = delete;
  FleetTrace& operator=(const FleetTrace&) = delete;

  const FleetTraceRows& rows() const { return rows_; }
  uint64_t lockRows() const { return lock_rows_; }      // rows forEachLockRow hands on
  uint64_t sampleRows() const { return sample_rows_; }  // at most as many cells
  // CPU samples counted per (1-second bucket, pid, thread, stack, context
  // values), handed on second by second (only one second's cells are held).
  void forEachSampleCell(const std::function<void(const FleetSampleCell&)>& emit);
  // Whether the trace has --context values (header.options.contexts).
  bool hasContexts() const { return !context_names_.empty(); }
  // One row per lock interval, in file order.
  void forEachLockRow(const std::function<void(const FleetLockRow&)>& emit);
  // One wait per acquisition and one hold per critical section, as they settle.
  void forEachLockSiteTime(const std::function<void(const FleetLockSiteTime&)>& emit);
  // One row per latency row and per latency histogram bucket, in file order.
  void forEachLatencyTime(const std::function<void(const FleetLatencyTime&)>& emit);
  uint64_t latencyRows() const { return latency_rows_; }

 private:
  FleetTrace() = default;
  std::unique_ptr<Trace> trace_;
  FleetTraceRows rows_;
  std::unique_ptr<FleetStackKeys> keys_;
  std::vector<std::string> context_names_;          // by slot
  std::vector<ContextTimeline> context_timelines_;  // by slot
  uint64_t lock_rows_ = 0;
  uint64_t sample_rows_ = 0;
  uint64_t latency_rows_ = 0;
};

}  // namespace incise::analyzer
