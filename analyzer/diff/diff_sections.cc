#include "analyzer/diff/diff_sections.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/stack_text.h"

namespace incise::analyzer {
namespace {

size_t shown(size_t rows, size_t limit) {
  return limit == 0 ? rows : std::min(rows, limit);
}

std::string formatted(const char* format, double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// "+", "-", or "" for zero: the sign of a change, before its magnitude.
std::string signOf(double change) {
  return change < 0 ? "-" : change > 0 ? "+" : "";
}

std::string signedDuration(int64_t ns) {
  return signOf(static_cast<double>(ns)) +
         formatDurationNs(static_cast<uint64_t>(ns < 0 ? -ns : ns));
}

// A side of a lock site that has no rows is null, not zeros: "absent" and
// "never waited" read differently.
nlohmann::json lockSideJson(const LockSiteSummary& s, bool present) {
  if (!present) return nullptr;
  return {{"acquisitions", s.acquisitions}, {"wait_p50_ns", s.wait.p50},
          {"wait_p99_ns", s.wait.p99},      {"hold_p50_ns", s.hold.p50},
          {"hold_p99_ns", s.hold.p99},      {"hold_inferred", s.hold_inferred}};
}

nlohmann::json latencySideJson(const LatencySummary& s, double calls_per_s, bool present) {
  if (!present) return nullptr;
  return {{"count", s.count},
          {"calls_per_s", std::round(calls_per_s * 1000) / 1000},
          {"total_ns", s.total_ns},
          {"p50_ns", s.p50_ns},
          {"p99_ns", s.p99_ns},
          {"max_ns", s.max_ns},
          {"from_buckets", s.from_buckets}};
}

nlohmann::json allocSideJson(const AllocTotals& t, double bytes_per_s, bool present) {
  if (!present) return nullptr;
  return {{"allocated_bytes", t.allocated_bytes},
          {"allocated_bytes_per_s", std::llround(bytes_per_s)},
          {"count", t.allocations()},
          {"live_bytes", t.live_bytes},
          {"live_count", t.liveAllocations()},
          {"samples", t.samples}};
}

std::string signedBytes(double bytes) {
  return signOf(bytes) + formatBytes(static_cast<uint64_t>(std::llround(std::abs(bytes))));
}

std::string durationPair(uint64_t before, uint64_t after) {
  return formatDurationNs(before) + " -> " + formatDurationNs(after);
}

}  // namespace

nlohmann::json functionDeltasJson(const std::vector<FunctionDelta>& rows, size_t limit) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < shown(rows.size(), limit); ++i) {
    const FunctionDelta& f = rows[i];
    list.push_back({{"name", f.name},
                    {"base_self_samples", f.base_self},
                    {"new_self_samples", f.new_self},
                    {"base_total_samples", f.base_total},
                    {"new_total_samples", f.new_total},
                    {"base_self_percent", roundedPercent(f.base_self_percent)},
                    {"new_self_percent", roundedPercent(f.new_self_percent)},
                    {"self_delta_points", roundedPercent(f.selfDelta())},
                    {"base_total_percent", roundedPercent(f.base_total_percent)},
                    {"new_total_percent", roundedPercent(f.new_total_percent)},
                    {"total_delta_points", roundedPercent(f.totalDelta())}});
  }
  return list;
}

nlohmann::json lockSiteDeltasJson(const std::vector<LockSiteDelta>& rows, size_t limit) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < shown(rows.size(), limit); ++i) {
    const LockSiteDelta& l = rows[i];
    list.push_back({{"site", l.site},
                    {"context", l.context},
                    {"base", lockSideJson(l.base, l.in_base)},
                    {"new", lockSideJson(l.next, l.in_new)},
                    {"wait_p50_delta_ns", l.waitP50Delta()},
                    {"wait_p99_delta_ns", l.waitP99Delta()},
                    {"hold_p50_delta_ns", l.holdP50Delta()},
                    {"hold_p99_delta_ns", l.holdP99Delta()}});
  }
  return list;
}

nlohmann::json offCpuDeltasJson(const std::vector<OffCpuDelta>& rows, size_t limit) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < shown(rows.size(), limit); ++i) {
    const OffCpuDelta& o = rows[i];
    list.push_back({{"frames", o.root_first},
                    {"base_ns", o.base_ns},
                    {"new_ns", o.new_ns},
                    {"delta_ns", o.nsDelta()},
                    {"base_ns_per_s", std::llround(o.base_ns_per_s)},
                    {"new_ns_per_s", std::llround(o.new_ns_per_s)},
                    {"delta_ns_per_s", std::llround(o.perSecondDelta())}});
  }
  return list;
}

nlohmann::json latencyDeltasJson(const std::vector<LatencyDelta>& rows, size_t limit) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < shown(rows.size(), limit); ++i) {
    const LatencyDelta& d = rows[i];
    list.push_back({{"kind", d.kind},
                    {"name", d.name},
                    {"base", latencySideJson(d.base, d.base_calls_per_s, d.in_base)},
                    {"new", latencySideJson(d.next, d.new_calls_per_s, d.in_new)},
                    {"p50_delta_ns", d.p50Delta()},
                    {"p99_delta_ns", d.p99Delta()},
                    {"max_delta_ns", d.maxDelta()}});
  }
  return list;
}

nlohmann::json allocSiteDeltasJson(const std::vector<AllocSiteDelta>& rows, size_t limit) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < shown(rows.size(), limit); ++i) {
    const AllocSiteDelta& d = rows[i];
    list.push_back({{"site", d.site},
                    {"stack", d.root_first},
                    {"base", allocSideJson(d.base, d.base_bytes_per_s, d.in_base)},
                    {"new", allocSideJson(d.next, d.new_bytes_per_s, d.in_new)},
                    {"allocated_bytes_per_s_delta", std::llround(d.allocatedPerSecondDelta())},
                    {"live_bytes_delta", d.liveDelta()}});
  }
  return list;
}

void printFunctionDeltas(const std::vector<FunctionDelta>& rows, size_t limit, std::ostream& out) {
  Table table({{"SELF CHG", Align::kRight},
               {"BASE SELF%", Align::kRight},
               {"NEW SELF%", Align::kRight},
               {"TOTAL CHG", Align::kRight},
               {"BASE TOTAL%", Align::kRight},
               {"NEW TOTAL%", Align::kRight},
               {"FUNCTION", Align::kLeft, 100}});
  for (size_t i = 0; i < shown(rows.size(), limit); ++i) {
    const FunctionDelta& f = rows[i];
    table.addRow({formatted("%+.2f", f.selfDelta()), formatPercent(f.base_self_percent),
                  formatPercent(f.new_self_percent), formatted("%+.2f", f.totalDelta()),
                  formatPercent(f.base_total_percent), formatPercent(f.new_total_percent), f.name});
  }
  table.render(out);
}

void printLockSiteDeltas(const std::vector<LockSiteDelta>& rows, size_t limit, std::ostream& out) {
  if (rows.empty()) return;
  Table table({{"SITE", Align::kLeft, 48},
               {"ACQ BASE", Align::kRight},
               {"ACQ NEW", Align::kRight},
               {"WAIT P50", Align::kRight},
               {"CHG", Align::kRight},
               {"WAIT P99", Align::kRight},
               {"CHG", Align::kRight},
               {"HOLD P50", Align::kRight},
               {"CHG", Align::kRight},
               {"HOLD P99", Align::kRight},
               {"CHG", Align::kRight}});
  for (size_t i = 0; i < shown(rows.size(), limit); ++i) {
    const LockSiteDelta& l = rows[i];
    table.addRow({l.context, formatCount(l.base.acquisitions), formatCount(l.next.acquisitions),
                  durationPair(l.base.wait.p50, l.next.wait.p50), signedDuration(l.waitP50Delta()),
                  durationPair(l.base.wait.p99, l.next.wait.p99), signedDuration(l.waitP99Delta()),
                  durationPair(l.base.hold.p50, l.next.hold.p50), signedDuration(l.holdP50Delta()),
                  durationPair(l.base.hold.p99, l.next.hold.p99),
                  signedDuration(l.holdP99Delta())});
  }
  table.render(out);
}

void printOffCpuDeltas(const std::vector<OffCpuDelta>& rows, size_t limit, std::ostream& out) {
  if (rows.empty()) return;
  Table table({{"CHG ms/s", Align::kRight},
               {"BASE ms/s", Align::kRight},
               {"NEW ms/s", Align::kRight},
               {"BASE", Align::kRight},
               {"NEW", Align::kRight},
               {"STACK", Align::kLeft, 100}});
  for (size_t i = 0; i < shown(rows.size(), limit); ++i) {
    const OffCpuDelta& o = rows[i];
    table.addRow({formatted("%+.3f", o.perSecondDelta() / 1e6),
                  formatted("%.3f", o.base_ns_per_s / 1e6), formatted("%.3f", o.new_ns_per_s / 1e6),
                  formatDurationNs(o.base_ns), formatDurationNs(o.new_ns),
                  stackLine(o.root_first)});
  }
  table.render(out);
}

void printLatencyDeltas(const std::vector<LatencyDelta>& rows, size_t limit, std::ostream& out) {
  if (rows.empty()) return;
  Table table({{"KIND", Align::kLeft},
               {"NAME", Align::kLeft, 48},
               {"CALLS/s", Align::kRight},
               {"P50", Align::kRight},
               {"CHG", Align::kRight},
               {"P99", Align::kRight},
               {"CHG", Align::kRight},
               {"MAX", Align::kRight}});
  bool buckets = false;
  for (size_t i = 0; i < shown(rows.size(), limit); ++i) {
    const LatencyDelta& d = rows[i];
    buckets = buckets || d.base.from_buckets || d.next.from_buckets;
    table.addRow(
        {d.kind, d.name,
         formatted("%.1f", d.base_calls_per_s) + " -> " + formatted("%.1f", d.new_calls_per_s),
         durationPair(d.base.p50_ns, d.next.p50_ns), signedDuration(d.p50Delta()),
         durationPair(d.base.p99_ns, d.next.p99_ns), signedDuration(d.p99Delta()),
         durationPair(d.base.max_ns, d.next.max_ns)});
  }
  table.render(out);
  if (buckets) {
    out << "  (a side recorded with --aggregate has log2 bucket bounds for percentiles)\n";
  }
}

void printAllocSiteDeltas(const std::vector<AllocSiteDelta>& rows, size_t limit,
                          std::ostream& out) {
  if (rows.empty()) return;
  Table table({{"CHG B/s", Align::kRight},
               {"BASE B/s", Align::kRight},
               {"NEW B/s", Align::kRight},
               {"LIVE CHG", Align::kRight},
               {"BASE LIVE", Align::kRight},
               {"NEW LIVE", Align::kRight},
               {"SITE", Align::kLeft, 40},
               {"STACK (leaf first)", Align::kLeft, 100}});
  for (size_t i = 0; i < shown(rows.size(), limit); ++i) {
    const AllocSiteDelta& d = rows[i];
    table.addRow({signedBytes(d.allocatedPerSecondDelta()),
                  formatBytes(static_cast<uint64_t>(std::llround(d.base_bytes_per_s))),
                  formatBytes(static_cast<uint64_t>(std::llround(d.new_bytes_per_s))),
                  signedBytes(static_cast<double>(d.liveDelta())), formatBytes(d.base.live_bytes),
                  formatBytes(d.next.live_bytes), d.site, stackLine(d.root_first)});
  }
  table.render(out);
}

}  // namespace incise::analyzer
