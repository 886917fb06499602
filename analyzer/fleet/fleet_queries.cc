#include "analyzer/fleet/fleet_queries.h"

#include <algorithm>
#include <cmath>

#include "analyzer/analyses/latency/latency_stats.h"
#include "analyzer/fleet/tab_separated.h"
#include "analyzer/render/folded_stacks.h"

namespace incise::analyzer {
namespace {

std::string termCondition(const std::string& key, const std::string& value) {
  std::string v = sqlString(value);
  if (key == "id") return "startsWith(trace_id, " + v + ")";
  if (key == "host") return "host = " + v;
  if (key == "kernel") return "kernel = " + v;
  if (key == "cmd") return "(program = " + v + " OR command = " + v + ")";
  if (key == "build-id") return "arrayExists(b -> startsWith(b, " + v + "), build_ids)";
  return "has(tags, " + sqlString(key + "=" + value) + ")";
}

uint64_t numberAt(const std::vector<std::string>& row, size_t i) {
  return i < row.size() && !row[i].empty() ? std::stoull(row[i]) : 0;
}

double realAt(const std::vector<std::string>& row, size_t i) {
  return i < row.size() && !row[i].empty() ? std::stod(row[i]) : 0;
}

// The names of every stack that `table`'s rows of the selected traces use,
// one row per stack (stacks are pushed by many traces, deduplicated on merge).
std::string stackNamesSql(const std::string& database, const std::string& table,
                          const std::string& trace_ids) {
  return "SELECT stack_key, any(names) AS names FROM " + database +
         ".stacks WHERE stack_key IN (SELECT stack_key FROM " + database + "." + table +
         " WHERE trace_id IN (" + trace_ids + ")) GROUP BY stack_key";
}

// " AND ..." holding sample_contexts rows to every condition: a row holds
// NAME=V1,V2 when its values name NAME with one of them, NAME!=... when they
// name NAME with none of them (an unknown value, not named, meets neither).
std::string contextConditionsSql(const std::vector<ContextCondition>& where) {
  std::string sql;
  for (const ContextCondition& condition : where) {
    std::string values;
    for (uint64_t value : condition.values)
      values += (values.empty() ? "" : ", ") + std::to_string(value);
    sql += " AND arrayExists((n, v) -> n = " + sqlString(condition.name) + " AND v " +
           (condition.negated ? "NOT IN (" : "IN (") + values + "), context_names, context_values)";
  }
  return sql;
}

}  // namespace

std::string selectedTraceIdsSql(const std::string& database, const Selector& selector) {
  std::string where;
  for (const auto& [key, value] : selector.terms) {
    where += (where.empty() ? " WHERE " : " AND ") + termCondition(key, value);
  }
  std::string sql = "SELECT trace_id FROM " + database + ".traces" + where;
  // A trace row appears twice only after two racing pushes: ORDER BY/LIMIT 1
  // BY and DISTINCT keep each trace once.
  if (selector.latest) return sql + " ORDER BY start_ns DESC, trace_id DESC LIMIT 1";
  return "SELECT DISTINCT trace_id FROM (" + sql + ")";
}

Result<MatchedTraces> queryMatchedTraces(ClickHouseClient& client, const std::string& database,
                                         const Selector& selector,
                                         const std::vector<ContextCondition>& where) {
  const std::string ids = selectedTraceIdsSql(database, selector);
  // --where: the traces selected, and of them those with samples that meet it.
  const std::string sql =
      where.empty() ? "SELECT count(), countIf(samples > 0), uniqExact(host), sum(samples) FROM ("
                      " SELECT trace_id, any(host) AS host, any(cpu_samples) AS samples FROM " +
                          database + ".traces WHERE trace_id IN (" + ids +
                          ") GROUP BY trace_id) FORMAT TabSeparated"
                    : "SELECT (SELECT count() FROM (SELECT DISTINCT trace_id FROM " + database +
                          ".traces WHERE trace_id IN (" + ids +
                          "))), uniqExact(trace_id), (SELECT uniqExact(host) FROM " + database +
                          ".traces WHERE trace_id IN (" + ids + ")), sum(samples) FROM " +
                          database + ".sample_contexts WHERE trace_id IN (" + ids + ")" +
                          contextConditionsSql(where) + " FORMAT TabSeparated";
  INCISE_ASSIGN_OR_RETURN(auto response, client.query(sql));
  auto rows = parseTabSeparated(response);
  if (rows.empty()) return Error("unexpected empty answer to the trace selection");
  MatchedTraces matched{numberAt(rows[0], 0), numberAt(rows[0], 1), numberAt(rows[0], 2),
                        numberAt(rows[0], 3)};
  if (matched.traces == 0) return Error("no pushed trace matches '" + selector.text + "'");
  return matched;
}

// Per trace: samples per stack; stacks joined for their names; each distinct
// name of a stack (its first occurrence) gets the stack's samples as total,
// and as self when it is the leaf; then shares of the trace's samples, averaged.
Result<FlatProfile> queryFunctionProfile(ClickHouseClient& client, const std::string& database,
                                         const Selector& selector, const MatchedTraces& matched,
                                         const std::vector<ContextCondition>& where) {
  const std::string ids = selectedTraceIdsSql(database, selector);
  // --where: the samples of sample_contexts that meet it, over each trace's such samples.
  const std::string table = where.empty() ? ".samples" : ".sample_contexts";
  const std::string held = contextConditionsSql(where);
  const std::string trace_weights =
      where.empty()
          ? "  SELECT trace_id, any(cpu_samples) AS trace_w FROM " + database +
                ".traces  WHERE trace_id IN (" + ids + ") AND cpu_samples > 0 GROUP BY trace_id"
          : "  SELECT trace_id, sum(samples) AS trace_w FROM " + database +
                ".sample_contexts WHERE trace_id IN (" + ids + ")" + held + " GROUP BY trace_id";
  const std::string n = std::to_string(std::max<uint64_t>(matched.with_samples, 1));
  std::string sql =
      "SELECT name, sum(self_w), sum(total_w),"
      " sum(self_w / trace_w) * 100 / " +
      n + ", sum(total_w / trace_w) * 100 / " + n +
      " FROM ("
      "  SELECT trace_id, name, sum(if(name = leaf, w, 0)) AS self_w, sum(w) AS total_w"
      "  FROM ("
      // Leaf and first occurrences are computed before the ARRAY JOIN: an
      // expression on `names` after it would copy the array into every row
      // (2.5x slower on 100 traces).
      "   SELECT trace_id, w, names, names[-1] AS leaf,"
      "    arrayEnumerateUniq(names) AS occurrences FROM ("
      "    SELECT trace_id, stack_key, sum(samples) AS w FROM " +
      database + table + "    WHERE trace_id IN (" + ids + ")" + held +
      " GROUP BY trace_id, stack_key)"
      "   ANY INNER JOIN ("
      "    " +
      stackNamesSql(database, "samples", ids) +
      ") USING stack_key)"
      "  ARRAY JOIN names AS name, occurrences AS occurrence"
      "  WHERE occurrence = 1"
      "  GROUP BY trace_id, name)"
      " ANY INNER JOIN (" +
      trace_weights +
      ") USING trace_id"
      " GROUP BY name FORMAT TabSeparated";
  INCISE_ASSIGN_OR_RETURN(auto response, client.query(sql));
  FlatProfile profile;
  profile.weight = matched.cpu_samples;
  for (const auto& row : parseTabSeparated(response)) {
    if (row.size() < 5) return Error("unexpected row in the function profile answer");
    profile.rows.push_back(
        {row[0], numberAt(row, 1), numberAt(row, 2), realAt(row, 3), realAt(row, 4)});
  }
  std::sort(profile.rows.begin(), profile.rows.end(), [](const auto& a, const auto& b) {
    if (a.self_percent != b.self_percent) return a.self_percent > b.self_percent;
    if (a.total_percent != b.total_percent) return a.total_percent > b.total_percent;
    return a.name < b.name;
  });
  return profile;
}

// Per trace: blocked ns per stack, named and joined into a folded path
// (';' inside a name becomes ':', as FoldedStacks::cleanFrame does), then
// per second of the trace's duration, averaged over the matched traces.
Result<std::map<std::string, FleetOffCpuPath>> queryOffCpuProfile(ClickHouseClient& client,
                                                                  const std::string& database,
                                                                  const Selector& selector,
                                                                  const MatchedTraces& matched) {
  const std::string ids = selectedTraceIdsSql(database, selector);
  const std::string n = std::to_string(std::max<uint64_t>(matched.traces, 1));
  std::string sql =
      "SELECT path, sum(ns), sum(ns * 1e9 / duration) / " + n +
      " FROM ("
      "  SELECT trace_id, path, sum(ns) AS ns FROM ("
      "   SELECT trace_id, ns,"
      "    arrayStringConcat(arrayMap(x -> replaceAll(x, ';', ':'), names), ';') AS path FROM ("
      "    SELECT trace_id, stack_key, sum(ns) AS ns FROM " +
      database +
      ".off_cpu"
      "    WHERE trace_id IN (" +
      ids +
      ") AND reason != 'preempted'"
      "    GROUP BY trace_id, stack_key)"
      "   ANY INNER JOIN ("
      "    " +
      stackNamesSql(database, "off_cpu", ids) +
      ") USING stack_key)"
      "  GROUP BY trace_id, path)"
      " ANY INNER JOIN ("
      "  SELECT trace_id, any(duration_ns) AS duration FROM " +
      database +
      ".traces"
      "  WHERE trace_id IN (" +
      ids +
      ") AND duration_ns > 0 GROUP BY trace_id) USING trace_id"
      " GROUP BY path FORMAT TabSeparated";
  INCISE_ASSIGN_OR_RETURN(auto response, client.query(sql));
  std::map<std::string, FleetOffCpuPath> paths;
  for (const auto& row : parseTabSeparated(response)) {
    if (row.size() < 3) return Error("unexpected row in the off-CPU answer");
    paths[row[0]] = {numberAt(row, 1), realAt(row, 2)};
  }
  return paths;
}

namespace {

// Columns of a Distribution of the sorted array `values`: count, total,
// nearest-rank p50/p90/p99 (the element at ceil(p * n / 100), as
// DurationDistribution; an empty array gives 0 as index 0 does), max.
std::string distributionColumns(const std::string& values) {
  auto rank = [&](const char* percent) {
    return values + "[toUInt64(intDiv(" + percent + " * length(" + values + ") + 99, 100))]";
  };
  return "length(" + values + "), arraySum(" + values + "), " + rank("50") + ", " + rank("90") +
         ", " + rank("99") + ", " + values + "[-1]";
}

Distribution distributionAt(const std::vector<std::string>& row, size_t i) {
  return {numberAt(row, i),     numberAt(row, i + 1), numberAt(row, i + 2),
          numberAt(row, i + 3), numberAt(row, i + 4), numberAt(row, i + 5)};
}

// The durations of the traces `ids` (an SQL list) select, summed: the
// window of pooled rates.
Result<uint64_t> summedDurationNs(ClickHouseClient& client, const std::string& database,
                                  const std::string& ids) {
  INCISE_ASSIGN_OR_RETURN(
      auto window, client.query("SELECT sum(duration) FROM (SELECT trace_id, any(duration_ns) AS "
                                "duration FROM " +
                                database + ".traces WHERE trace_id IN (" + ids +
                                ") GROUP BY trace_id) FORMAT TabSeparated"));
  uint64_t sum = 0;
  for (const auto& row : parseTabSeparated(window)) sum = numberAt(row, 0);
  return sum;
}

}  // namespace

Result<std::vector<LockSiteSummary>> queryLockSites(ClickHouseClient& client,
                                                    const std::string& database,
                                                    const Selector& selector) {
  std::string sql = "SELECT site, context, " + distributionColumns("waits") + ", " +
                    distributionColumns("holds") +
                    ", inferred FROM ("
                    "  SELECT site, any(context) AS context,"
                    "   arraySort(groupArrayIf(ns, measure = 'wait')) AS waits,"
                    "   arraySort(groupArrayIf(ns, measure = 'hold')) AS holds,"
                    "   max(inferred) AS inferred FROM " +
                    database + ".lock_site_times WHERE trace_id IN (" +
                    selectedTraceIdsSql(database, selector) +
                    ") GROUP BY site) ORDER BY site FORMAT TabSeparated";
  INCISE_ASSIGN_OR_RETURN(auto response, client.query(sql));
  std::vector<LockSiteSummary> sites;
  for (const auto& row : parseTabSeparated(response)) {
    if (row.size() < 15) return Error("unexpected row in the lock-site answer");
    LockSiteSummary site{row[0],
                         row[1],
                         numberAt(row, 2),
                         distributionAt(row, 2),
                         distributionAt(row, 8),
                         numberAt(row, 14) != 0};
    sites.push_back(std::move(site));
  }
  return sites;
}

Result<FleetLatency> queryLatency(ClickHouseClient& client, const std::string& database,
                                  const Selector& selector) {
  const std::string ids = selectedTraceIdsSql(database, selector);
  const std::string table = database + ".latency_times WHERE trace_id IN (" + ids + ")";
  FleetLatency latency;
  INCISE_ASSIGN_OR_RETURN(latency.window_ns, summedDurationNs(client, database, ids));

  INCISE_ASSIGN_OR_RETURN(
      auto groups,
      client.query("SELECT kind, name, call_count, total, top, any_counted, " +
                   distributionColumns("durations") +
                   " FROM (SELECT kind, name, sum(calls) AS call_count, sum(total_ns) AS total,"
                   " max(max_ns) AS top, max(counted) AS any_counted,"
                   " arraySort(groupArrayIf(ns, counted = 0)) AS durations FROM " +
                   table + " GROUP BY kind, name) ORDER BY kind, name FORMAT TabSeparated"));
  std::map<std::pair<std::string, std::string>, size_t> counted;
  for (const auto& row : parseTabSeparated(groups)) {
    if (row.size() < 12) return Error("unexpected row in the latency answer");
    Distribution calls = distributionAt(row, 6);
    LatencySummary summary{.kind = row[0],
                           .name = row[1],
                           .count = numberAt(row, 2),
                           .total_ns = numberAt(row, 3),
                           .p50_ns = calls.p50,
                           .p99_ns = calls.p99,
                           .max_ns = numberAt(row, 4),
                           .from_buckets = numberAt(row, 5) != 0};
    if (summary.from_buckets) counted[{summary.kind, summary.name}] = latency.rows.size();
    latency.rows.push_back(std::move(summary));
  }
  if (counted.empty()) return latency;

  // A name some trace counted in BPF has only buckets to go by: its calls'
  // buckets, summed over every trace, as LatencyStatsBuilder merges them.
  INCISE_ASSIGN_OR_RETURN(auto buckets,
                          client.query("SELECT kind, name, bucket, sum(calls) FROM " + table +
                                       " GROUP BY kind, name, bucket FORMAT TabSeparated"));
  std::map<size_t, Log2Histogram> histograms;
  for (const auto& row : parseTabSeparated(buckets)) {
    if (row.size() < 4) return Error("unexpected row in the latency bucket answer");
    auto group = counted.find({row[0], row[1]});
    uint64_t bucket = numberAt(row, 2);
    if (group == counted.end() || bucket >= kLog2Buckets) continue;
    auto [histogram, added] = histograms.try_emplace(group->second);
    if (added) histogram->second.fill(0);
    histogram->second[bucket] += numberAt(row, 3);
  }
  for (const auto& [index, histogram] : histograms) {
    LatencySummary& summary = latency.rows[index];
    summary.p50_ns = log2Percentile(histogram, 50, summary.max_ns);
    summary.p99_ns = log2Percentile(histogram, 99, summary.max_ns);
  }
  return latency;
}

Result<FleetAllocSites> queryAllocSites(ClickHouseClient& client, const std::string& database,
                                        const Selector& selector) {
  const std::string ids = selectedTraceIdsSql(database, selector);
  FleetAllocSites sites;
  INCISE_ASSIGN_OR_RETURN(sites.window_ns, summedDurationNs(client, database, ids));
  // The path travels as one field, ';'-joined (FoldedStacks), its names'
  // own ';' replaced as the off-CPU paths' are.
  INCISE_ASSIGN_OR_RETURN(
      auto response, client.query("SELECT site,"
                                  " arrayStringConcat(arrayMap(x -> replaceAll(x, ';', ':'),"
                                  " argMax(stack, allocated_bytes)), ';'),"
                                  " sum(allocated_bytes), sum(allocated_milli), sum(samples),"
                                  " sum(live_bytes), sum(live_milli), sum(live_samples) FROM " +
                                  database + ".alloc_sites WHERE trace_id IN (" + ids +
                                  ") GROUP BY site ORDER BY site FORMAT TabSeparated"));
  for (const auto& row : parseTabSeparated(response)) {
    if (row.size() < 8) return Error("unexpected row in the allocation answer");
    AllocSite site;
    site.site = row[0];
    site.root_first = FoldedStacks::split(row[1]);
    site.totals.allocated_bytes = numberAt(row, 2);
    site.totals.allocated_milli = numberAt(row, 3);
    site.totals.samples = numberAt(row, 4);
    site.totals.live_bytes = numberAt(row, 5);
    site.totals.live_milli = numberAt(row, 6);
    site.totals.live_samples = numberAt(row, 7);
    sites.rows.push_back(std::move(site));
  }
  return sites;
}

std::vector<OffCpuDelta> diffFleetOffCpu(const std::map<std::string, FleetOffCpuPath>& base,
                                         const std::map<std::string, FleetOffCpuPath>& next) {
  std::map<std::string, OffCpuDelta> by_path;
  for (const auto& [path, side] : base) {
    by_path[path].base_ns = side.ns;
    by_path[path].base_ns_per_s = side.ns_per_s;
  }
  for (const auto& [path, side] : next) {
    by_path[path].new_ns = side.ns;
    by_path[path].new_ns_per_s = side.ns_per_s;
  }
  std::vector<OffCpuDelta> rows;
  for (auto& [path, d] : by_path) {
    d.root_first = FoldedStacks::split(path);
    rows.push_back(std::move(d));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const OffCpuDelta& a, const OffCpuDelta& b) {
    return std::abs(a.perSecondDelta()) > std::abs(b.perSecondDelta());
  });
  return rows;
}

}  // namespace incise::analyzer
