// TraceProfile: the aggregates `incise diff` compares, gathered from one
// trace through the same analyses the single-trace reports use — the flat
// profile of CPU samples (top), on-CPU and blocked off-CPU folded stacks
// (flame, flame --off-cpu), per acquire site lock wait and hold
// distributions (locks --by site), per traced function, syscall, device
// and opcode the latency statistics (latency), and per allocation site the
// sampled bytes allocated and still live (alloc --by site).
//
// Memory is bounded by distinct stacks and lock sites: every kind streams
// (lock rows through readLockStats, as `incise locks` reads them).
//
//   auto trace = Trace::open("base.trace", options);
//   TraceProfile base = collectTraceProfile(**trace);
//   base.functions.rows[0].self_percent;
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/analyses/alloc/alloc_sites.h"
#include "analyzer/analyses/locks/lock_stats.h"
#include "analyzer/analyses/profile/flat_profile.h"
#include "analyzer/diff/trace_facts.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/folded_stacks.h"

namespace incise::analyzer {

struct LockSiteSummary {
  std::string site;     // the acquiring function (LockSites::name)
  std::string context;  // "site <- caller"
  uint64_t acquisitions = 0;
  Distribution wait;
  Distribution hold;
  bool hold_inferred = false;
};

// One group of `incise latency` (by name): what was timed, how often, how long.
struct LatencySummary {
  std::string kind;  // format::latencySourceName: "function", "syscall", ...
  std::string name;  // LatencyNames::name: "parse_request", "nanosleep", "loop0 read"
  uint64_t count = 0, total_ns = 0;
  uint64_t p50_ns = 0, p99_ns = 0, max_ns = 0;
  bool from_buckets = false;  // --aggregate: percentiles are log2 bucket bounds
};

struct TraceProfile {
  std::string path;
  TraceFacts facts;
  uint64_t window_ns = 0;  // duration of the part analysed (the --time window, else all)
  FlatProfile functions;   // CPU samples, 1 per sample
  FoldedStacks on_cpu;     // samples per call path
  FoldedStacks off_cpu;    // blocked ns per off-CPU call path
  std::vector<LockSiteSummary> lock_sites;
  std::vector<LatencySummary> latency;
  std::vector<AllocSite> alloc_sites;  // merged by site, most bytes allocated first
  FoldedStacks allocated;              // bytes allocated per call path (--alloc)
  FoldedStacks live;                   // bytes still live at the end per call path
};

TraceProfile collectTraceProfile(Trace& trace);

}  // namespace incise::analyzer
