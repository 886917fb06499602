#include "analyzer/diff/trace_profile.h"

#include "analyzer/analyses/alloc/alloc_profile.h"
#include "analyzer/analyses/latency/latency_names.h"
#include "analyzer/analyses/latency/latency_stats.h"
#include "analyzer/analyses/locks/lock_sites.h"
#include "analyzer/analyses/locks/trace_lock_stats.h"
#include "analyzer/analyses/profile/flame_weights.h"
#include "analyzer/model/stack_namer.h"

namespace incise::analyzer {
namespace {

std::vector<LockSiteSummary> collectLockSites(Trace& trace) {
  LockSites sites(trace.symbolizer(), trace.stacks());
  TraceLockStats stats = readLockStats(trace, LockGrouping::kBySite, sites, /*top_threads=*/0);
  std::vector<LockSiteSummary> summaries;
  for (const LockGroupStats& group : stats.groups) {
    summaries.push_back({sites.name(group.site), sites.context(group.site), group.acquisitions,
                         group.wait, group.hold, group.hold_inferred});
  }
  return summaries;
}

std::vector<LatencySummary> collectLatency(Trace& trace) {
  LatencyStatsBuilder stats(LatencyGrouping::kByName);
  trace.forEachRow<format::Latency>([&](const format::Latency& row) { stats.add(row); });
  trace.forEachRow<format::LatencyHistogram>(
      [&](const format::LatencyHistogram& row) { stats.add(row); });
  LatencyNames names(trace.reader().metadata());
  std::vector<LatencySummary> summaries;
  for (const LatencyGroupStats& g : stats.finish()) {
    summaries.push_back({.kind = std::string(format::latencySourceName(g.source)),
                         .name = names.name(g.source, g.probe, g.detail),
                         .count = g.count,
                         .total_ns = g.total_ns,
                         .p50_ns = g.p50_ns,
                         .p99_ns = g.p99_ns,
                         .max_ns = g.max_ns,
                         .from_buckets = g.from_buckets});
  }
  return summaries;
}

}  // namespace

TraceProfile collectTraceProfile(Trace& trace) {
  TraceProfile profile;
  profile.path = trace.path();
  profile.facts = traceFactsOf(trace.reader());
  profile.window_ns = trace.durationNs();
  StackNamer namer(trace, FrameGrouping::kFunction);

  NamedStacks on_cpu = collectFlameWeights(trace, FlameWeighting::kOnCpu).named(namer);
  profile.on_cpu = foldedStacks(on_cpu);
  profile.functions = computeFlatProfile(on_cpu);
  profile.off_cpu = foldedStacks(collectFlameWeights(trace, FlameWeighting::kOffCpu).named(namer));
  profile.lock_sites = collectLockSites(trace);
  profile.latency = collectLatency(trace);
  const AllocProfile allocations = collectAllocProfile(trace);
  profile.alloc_sites = mergedBySite(namedAllocSites(allocations, namer));
  profile.allocated =
      foldedStacks(allocStackWeights(allocations, AllocWeighting::kAllocated).named(namer));
  profile.live = foldedStacks(allocStackWeights(allocations, AllocWeighting::kLive).named(namer));
  return profile;
}

}  // namespace incise::analyzer
