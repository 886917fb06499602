#include "analyzer/diff/trace_profile.h"

#include "analyzer/model/stack_namer.h"
#include "analyzer/reports/critical_sections.h"
#include "analyzer/reports/flame_weights.h"
#include "analyzer/reports/lock_sites.h"
#include "analyzer/reports/trace_lock_timeline.h"

namespace incise::analyzer {
namespace {

std::vector<LockSiteSummary> collectLockSites(Trace& trace) {
  LockTimeline timeline = readLockTimeline(trace, /*keep_acquisitions=*/true);
  if (timeline.acquisitions.empty() && timeline.sections.empty()) return {};
  LockSites sites(trace.symbolizer(), trace.stacks());
  sites.addStacksOf(timeline);
  std::vector<LockGroupStats> groups = computeLockStats(
      timeline, LockGrouping::kBySite, [&](uint64_t stack) { return sites.siteOf(stack); },
      /*top_threads=*/0);
  std::vector<LockSiteSummary> summaries;
  for (const LockGroupStats& group : groups) {
    summaries.push_back({sites.name(group.site), sites.context(group.site), group.acquisitions,
                         group.wait, group.hold, group.hold_inferred});
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
  return profile;
}

}  // namespace incise::analyzer
