#include "analyzer/analyses/latency/latency_stats.h"

#include <algorithm>

namespace incise::analyzer {

uint64_t log2Percentile(const Log2Histogram& histogram, uint64_t percent, uint64_t max) {
  uint64_t count = 0;
  for (uint64_t n : histogram) count += n;
  if (count == 0) return 0;
  uint64_t rank = std::max<uint64_t>((percent * count + 99) / 100, 1);
  uint64_t seen = 0;
  for (size_t b = 0; b < kLog2Buckets; ++b) {
    seen += histogram[b];
    if (seen >= rank) return std::min(log2BucketEnd(b) - 1, max);
  }
  return max;
}

LatencyRowCalls callsOf(const format::Latency& row) {
  uint64_t weight = std::max<uint64_t>(row.weight, 1);
  return {.calls = weight, .total_ns = row.duration * weight, .max_ns = row.duration};
}

LatencyRowCalls callsOf(const format::LatencyHistogram& row) {
  uint64_t weight = std::max<uint64_t>(row.weight, 1);
  return {.calls = row.count * weight,
          .total_ns = row.total_ns * weight,
          .max_ns = std::max(row.max_ns, row.count ? log2BucketStart(row.bucket) : 0)};
}

LatencyStatsBuilder::Group& LatencyStatsBuilder::groupOf(uint64_t source, uint64_t probe,
                                                         uint64_t detail, uint64_t pid,
                                                         uint64_t stack, uint64_t time,
                                                         std::optional<uint64_t> value) {
  const bool by_stack = grouping_ == LatencyGrouping::kByStack;
  const bool by_context = grouping_ == LatencyGrouping::kByContext;
  Key key{source, probe, detail, by_stack ? pid : 0, by_stack ? stack : 0};
  // A value in the stack's place; an unknown one apart from every value.
  if (by_context) key = {source, probe, detail, value ? 0 : 1, value.value_or(0)};
  auto [it, added] = groups_.try_emplace(key);
  Group& group = it->second;
  if (added) {
    group.stats.source = source;
    group.stats.probe = probe;
    group.stats.detail = detail;
    group.stats.pid = by_stack ? pid : 0;
    group.stats.stack_id = by_stack ? stack : 0;
    if (by_context) group.stats.value = value;
    group.stats.first_time = time;
  }
  return group;
}

void LatencyStatsBuilder::add(const format::Latency& row, std::optional<uint64_t> value) {
  Group& group = groupOf(row.source, row.probe, row.detail, row.pid, row.stack_id, row.time, value);
  LatencyGroupStats& s = group.stats;
  const LatencyRowCalls calls = callsOf(row);
  const uint64_t weight = calls.calls;
  s.count += calls.calls;
  s.rows += 1;
  s.total_ns += calls.total_ns;
  s.bytes += row.bytes * weight;
  if (row.error != 0) s.errors += weight;
  s.max_ns = std::max(s.max_ns, calls.max_ns);
  s.sampled = s.sampled || weight > 1;
  s.histogram[log2Bucket(row.duration)] += weight;
  // Sampled rows are a uniform sample of the calls: their percentiles estimate
  // the calls' without weighing each row N times.
  group.durations.add(row.duration);
}

void LatencyStatsBuilder::add(const format::LatencyHistogram& row) {
  Group& group = groupOf(row.source, row.probe, 0, row.pid, row.stack_id, row.time, std::nullopt);
  LatencyGroupStats& s = group.stats;
  if (row.bucket >= kLog2Buckets) return;
  const LatencyRowCalls calls = callsOf(row);
  s.count += calls.calls;
  s.rows += 1;
  s.total_ns += calls.total_ns;
  s.max_ns = std::max(s.max_ns, calls.max_ns);
  s.sampled = s.sampled || row.weight > 1;
  s.histogram[row.bucket] += calls.calls;
  group.has_histograms = true;
}

std::vector<LatencyGroupStats> LatencyStatsBuilder::finish() const {
  std::vector<LatencyGroupStats> out;
  out.reserve(groups_.size());
  for (const auto& [key, group] : groups_) {
    LatencyGroupStats s = group.stats;
    if (group.has_histograms) {
      s.exact_percentiles = false;
      s.from_buckets = true;
      s.p50_ns = log2Percentile(s.histogram, 50, s.max_ns);
      s.p90_ns = log2Percentile(s.histogram, 90, s.max_ns);
      s.p99_ns = log2Percentile(s.histogram, 99, s.max_ns);
    } else {
      Distribution d = group.durations.summary();
      s.p50_ns = d.p50;
      s.p90_ns = d.p90;
      s.p99_ns = d.p99;
      s.exact_percentiles = group.durations.exact();
    }
    out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  return out;
}

}  // namespace incise::analyzer
