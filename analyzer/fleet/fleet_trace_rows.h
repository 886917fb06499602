// FleetTraceRows: one trace turned into the rows of the fleet tables
// (fleet_schema.h), before any of it is sent.
//
// Stacks are named the way `incise top`/`diff` name them (StackNamer, by
// function; a stack without frames is "[no stack]"), and keyed by a hash of
// their frames' content, so the same call path from any host and any trace
// is one stacks row. Samples are counted per (1-second bucket, pid, thread,
// stack); off-CPU spans are summed per (stack, reason); lock intervals stay
// one row each. Lock-site times are the values `incise diff` takes its lock
// percentiles from (buildLockTimeline, LockSites, as collectTraceProfile):
// one wait per acquisition, one hold per critical section (recorded, or
// inferred from wakes in contended mode), each with its site's name. The trace id is the XXH3-64 of
// the file's bytes, the same id the local archive gives it, so pushing the same file twice is
// detectable.
//
// Memory: bounded by distinct stacks and (second, thread, stack) cells,
// except lock intervals and scheduler switches, materialised as the local
// reports do.
//
//   auto rows = collectFleetRows("app.trace", /*progress=*/true);
//   rows->trace_id;                 // "3f9c0a1b2c3d4e5f"
//   rows->samples.size();           // aggregated sample rows
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyzer/diff/trace_facts.h"
#include "format/status.h"

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

struct FleetOffCpuRow {
  uint64_t stack_key = 0;
  std::string reason;  // "preempted", or the blocked task state ("S", "D", "state 0x...")
  uint64_t ns = 0, count = 0;
};

struct FleetTraceRows {
  std::string trace_id;
  TraceFacts facts;
  uint64_t cpu_samples = 0;              // CPU samples counted into `samples`
  std::map<std::string, uint64_t> lost;  // source -> events the kernel dropped
  std::vector<FleetFrame> frames;
  std::vector<FleetStack> stacks;
  std::vector<FleetSampleCell> samples;
  std::vector<FleetLockRow> locks;
  std::vector<FleetLockSiteTime> lock_site_times;
  std::vector<FleetOffCpuRow> off_cpu;
  uint64_t rowCount() const {
    return frames.size() + stacks.size() + samples.size() + locks.size() + lock_site_times.size() +
           off_cpu.size() + 1;
  }
};

Result<FleetTraceRows> collectFleetRows(const std::string& path, bool progress);

}  // namespace incise::analyzer
