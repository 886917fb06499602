// The deltas of `incise diff`: pure functions of two traces' aggregates.
//
//  - functions: self and total share of each trace's CPU samples, in percent;
//    the delta is in percentage points (new - base), so traces of different
//    lengths or sample rates compare;
//  - lock sites: wait and hold p50/p99 (ns) per acquire site, matched by the
//    site's function name;
//  - off-CPU stacks: blocked ns per call path, and ns per second of trace so
//    traces of different lengths compare; sorted by the change per second;
//  - latency: per traced function, syscall, device and opcode (matched by
//    kind and name), calls per second and p50/p99/max (ns); sorted by the
//    change of p99;
//  - allocation sites (matched by the site's function name): estimated
//    bytes allocated, also per second of each trace, and bytes still live
//    at the end; sorted by the larger of the change per second allocated
//    and the change of live bytes.
// Rows present in one trace only have zeros (and `in_base`/`in_new` false)
// on the other side. Every list is sorted by the size of its change, largest
// first, ties by name, so output is stable.
//
//   std::vector<FunctionDelta> rows = diffFunctions(base.functions, next.functions);
//   rows[0].name, rows[0].selfDelta();   // "parse", +12.5 (pp)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/diff/trace_profile.h"

namespace incise::analyzer {

struct FunctionDelta {
  std::string name;
  uint64_t base_self = 0, new_self = 0;    // samples
  uint64_t base_total = 0, new_total = 0;  // samples
  double base_self_percent = 0, new_self_percent = 0;
  double base_total_percent = 0, new_total_percent = 0;
  double selfDelta() const { return new_self_percent - base_self_percent; }
  double totalDelta() const { return new_total_percent - base_total_percent; }
};

std::vector<FunctionDelta> diffFunctions(const FlatProfile& base, const FlatProfile& next);

struct LockSiteDelta {
  std::string site;
  std::string context;
  bool in_base = false, in_new = false;
  LockSiteSummary base, next;  // zeros where the site is absent
  int64_t waitP50Delta() const { return delta(base.wait.p50, next.wait.p50); }
  int64_t waitP99Delta() const { return delta(base.wait.p99, next.wait.p99); }
  int64_t holdP50Delta() const { return delta(base.hold.p50, next.hold.p50); }
  int64_t holdP99Delta() const { return delta(base.hold.p99, next.hold.p99); }
  static int64_t delta(uint64_t before, uint64_t after) {
    return static_cast<int64_t>(after) - static_cast<int64_t>(before);
  }
};

// Sorted by the largest absolute change among the four percentiles.
std::vector<LockSiteDelta> diffLockSites(const std::vector<LockSiteSummary>& base,
                                         const std::vector<LockSiteSummary>& next);

struct OffCpuDelta {
  std::vector<std::string> root_first;
  uint64_t base_ns = 0, new_ns = 0;
  double base_ns_per_s = 0, new_ns_per_s = 0;  // per second of each trace
  int64_t nsDelta() const { return static_cast<int64_t>(new_ns) - static_cast<int64_t>(base_ns); }
  double perSecondDelta() const { return new_ns_per_s - base_ns_per_s; }
};

// `*_window_ns`: the duration each trace's figures cover.
std::vector<OffCpuDelta> diffOffCpu(const FoldedStacks& base, uint64_t base_window_ns,
                                    const FoldedStacks& next, uint64_t new_window_ns);

struct LatencyDelta {
  std::string kind, name;
  bool in_base = false, in_new = false;
  LatencySummary base, next;  // zeros where it is absent
  double base_calls_per_s = 0, new_calls_per_s = 0;
  int64_t p50Delta() const { return LockSiteDelta::delta(base.p50_ns, next.p50_ns); }
  int64_t p99Delta() const { return LockSiteDelta::delta(base.p99_ns, next.p99_ns); }
  int64_t maxDelta() const { return LockSiteDelta::delta(base.max_ns, next.max_ns); }
};

std::vector<LatencyDelta> diffLatency(const std::vector<LatencySummary>& base,
                                      uint64_t base_window_ns,
                                      const std::vector<LatencySummary>& next,
                                      uint64_t new_window_ns);

struct AllocSiteDelta {
  std::string site;
  std::vector<std::string>
      root_first;  // the site's largest call path, of the side it is largest in
  bool in_base = false, in_new = false;
  AllocTotals base, next;  // zeros where the site is absent
  double base_bytes_per_s = 0, new_bytes_per_s = 0;
  double allocatedPerSecondDelta() const { return new_bytes_per_s - base_bytes_per_s; }
  int64_t liveDelta() const { return LockSiteDelta::delta(base.live_bytes, next.live_bytes); }
};

// `base` and `next`: sites merged by name (mergedBySite).
std::vector<AllocSiteDelta> diffAllocSites(const std::vector<AllocSite>& base,
                                           uint64_t base_window_ns,
                                           const std::vector<AllocSite>& next,
                                           uint64_t new_window_ns);

}  // namespace incise::analyzer
