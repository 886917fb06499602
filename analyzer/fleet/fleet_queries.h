// The fleet reports in SQL: which traces a selector matches, and their
// per-function profile, computed by ClickHouse over every matching trace.
//
// Same meaning as the local `incise top`/`diff` (flat_profile.h): per trace,
// a function's self share is the fraction of the trace's CPU samples whose
// leaf it is, its total share the fraction whose stack contains it (once per
// stack, however often it recurs). Across traces the shares are averaged, so
// every trace counts the same however long it ran or fast it sampled; a
// trace without CPU samples is left out of the average. With one trace per
// side the numbers are exactly the local ones.
//
// Selectors are the local archive's (archive_selector.h): host=, kernel=,
// cmd=, id= (a prefix), build-id= (a prefix), any other key=value is a tag,
// terms joined by commas all apply; `latest` narrows to the latest match.
//
//   auto selector = parseSelector("build=v2,host=db1");
//   auto matched = queryMatchedTraces(client, "incise", *selector);   // count, hosts, samples
//   auto profile = queryFunctionProfile(client, "incise", *selector, *matched);
//   profile->rows[0].name, profile->rows[0].self_percent;
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyzer/analyses/profile/flat_profile.h"
#include "analyzer/archive/archive_selector.h"
#include "analyzer/diff/profile_diff.h"
#include "analyzer/fleet/clickhouse_client.h"
#include "analyzer/model/filter.h"
#include "base/status.h"

namespace incise::analyzer {

// The SQL that lists the trace ids `selector` matches (each once).
std::string selectedTraceIdsSql(const std::string& database, const Selector& selector);

struct MatchedTraces {
  uint64_t traces = 0;        // matching traces
  uint64_t with_samples = 0;  // of which have CPU samples: the average's denominator
  uint64_t hosts = 0;         // distinct hosts among them
  uint64_t cpu_samples = 0;
};

// An error naming the selector when nothing matches. With `where` (--where
// conditions on context values), the samples counted are those of
// sample_contexts whose values meet every condition, and with_samples the
// traces that have any.
Result<MatchedTraces> queryMatchedTraces(ClickHouseClient& client, const std::string& database,
                                         const Selector& selector,
                                         const std::vector<ContextCondition>& where = {});

// Rows sorted by self share, then total share (both descending), then name —
// for one trace the order computeFlatProfile gives. self/total are sample
// counts summed over the traces, the percentages averaged shares; `weight`
// is the summed samples.
// With `where`, of the samples that meet it, as shares of each trace's such samples.
Result<FlatProfile> queryFunctionProfile(ClickHouseClient& client, const std::string& database,
                                         const Selector& selector, const MatchedTraces& matched,
                                         const std::vector<ContextCondition>& where = {});

// Blocked (not preempted) off-CPU time per call path, as `incise diff` has
// it: the path is the stack's names joined by ';' (FoldedStacks), `ns` the
// sum over the traces, `ns_per_s` per second of each trace, averaged.
struct FleetOffCpuPath {
  uint64_t ns = 0;
  double ns_per_s = 0;
};
Result<std::map<std::string, FleetOffCpuPath>> queryOffCpuProfile(ClickHouseClient& client,
                                                                  const std::string& database,
                                                                  const Selector& selector,
                                                                  const MatchedTraces& matched);

// Wait and hold distributions per acquire site, as collectTraceProfile has
// them (site name, context, acquisitions, nearest-rank p50/p90/p99, max),
// over the waits and holds of every matched trace POOLED: a site's p99 is
// the p99 of all its waits in those traces, so traces with more
// acquisitions weigh more. With one trace, exactly the local figures.
// diffLockSites turns two sides into `incise diff`'s lock-site rows.
Result<std::vector<LockSiteSummary>> queryLockSites(ClickHouseClient& client,
                                                    const std::string& database,
                                                    const Selector& selector);

// Latency per traced function, syscall, device and opcode (kind and name),
// as collectTraceProfile has it, over the calls of every matched trace
// POOLED, like the lock sites: percentiles are nearest-rank over the calls'
// durations, or (a name counted in BPF by some trace, --aggregate) the upper
// bound of the log2 bucket that holds them, capped at the max. `window_ns`
// sums the traces' durations, so calls per second are pooled too. With one
// trace, `incise diff`'s figures (up to 4,096 calls a name, where the local
// percentiles are exact).
struct FleetLatency {
  std::vector<LatencySummary> rows;
  uint64_t window_ns = 0;
};
Result<FleetLatency> queryLatency(ClickHouseClient& client, const std::string& database,
                                  const Selector& selector);

// Sampled allocations per site (--alloc), as collectTraceProfile has them,
// summed over every matched trace: bytes and allocations allocated and live
// at each trace's end; a site's call path is its largest over the traces.
// `window_ns` sums the traces' durations, so bytes per second are pooled,
// as latency's calls. diffAllocSites turns two sides into `incise diff`'s
// allocation rows.
struct FleetAllocSites {
  std::vector<AllocSite> rows;  // by site name
  uint64_t window_ns = 0;
};
Result<FleetAllocSites> queryAllocSites(ClickHouseClient& client, const std::string& database,
                                        const Selector& selector);

// The off-CPU rows of `incise diff` from two sides' paths, sorted by the
// size of the per-second change.
std::vector<OffCpuDelta> diffFleetOffCpu(const std::map<std::string, FleetOffCpuPath>& base,
                                         const std::map<std::string, FleetOffCpuPath>& next);

}  // namespace incise::analyzer
