#include "analyzer/analyses/latency/latency_heatmap.h"

#include <algorithm>
#include <set>

namespace incise::analyzer {

uint64_t heatMapColumnNs(uint64_t span_ns, size_t max_columns) {
  constexpr uint64_t kMinimum = 1'000'000;
  uint64_t columns = std::max<size_t>(max_columns, 1);
  // The narrowest width that fits the span in `columns` (ceiling division).
  uint64_t wanted = std::max<uint64_t>(span_ns / columns + (span_ns % columns != 0), kMinimum);
  for (uint64_t scale = kMinimum;; scale *= 10) {
    for (uint64_t step : {1, 2, 5})
      if (step * scale >= wanted) return step * scale;
    if (scale > UINT64_MAX / 100) return UINT64_MAX / 10;
  }
}

LatencyHeatMapBuilder::LatencyHeatMapBuilder(uint64_t start, uint64_t end, uint64_t origin,
                                             size_t max_columns)
    : start_(start), end_(std::max(end, start + 1)), origin_(std::min(origin, start)) {
  column_ns_ = heatMapColumnNs(end_ - start_, max_columns);
  columns_ = static_cast<size_t>((end_ - start_ + column_ns_ - 1) / column_ns_);
}

void LatencyHeatMapBuilder::count(const Key& key, uint64_t time, uint64_t bucket, uint64_t calls) {
  if (time < start_ || time >= end_ || bucket >= kLog2Buckets) return;
  auto& columns = maps_[key];
  if (columns.empty()) columns.assign(columns_, Log2Histogram{});
  size_t column = std::min(static_cast<size_t>((time - start_) / column_ns_), columns_ - 1);
  columns[column][bucket] += calls;
}

void LatencyHeatMapBuilder::add(const format::Latency& row) {
  count({row.source, row.probe, row.detail}, row.time, log2Bucket(row.duration),
        std::max<uint64_t>(row.weight, 1));
}

void LatencyHeatMapBuilder::add(const format::LatencyHistogram& row) {
  uint64_t middle = row.time + (std::max(row.end_time, row.time) - row.time) / 2;
  count({row.source, row.probe, 0}, middle, row.bucket,
        row.count * std::max<uint64_t>(row.weight, 1));
}

std::vector<HeatMap> LatencyHeatMapBuilder::finish(
    const LatencyNames& names, const std::vector<Key>& order,
    const std::function<std::string(const Key&)>& summary) const {
  std::vector<Key> keys;
  std::set<Key> placed;
  for (const Key& key : order)
    if (maps_.count(key) && placed.insert(key).second) keys.push_back(key);
  for (const auto& [key, columns] : maps_)
    if (placed.insert(key).second) keys.push_back(key);

  std::vector<HeatMap> out;
  for (const Key& key : keys) {
    const auto& columns = maps_.at(key);
    size_t low = kLog2Buckets, high = 0;
    for (const Log2Histogram& column : columns)
      for (size_t b = 0; b < kLog2Buckets; ++b)
        if (column[b]) {
          low = std::min(low, b);
          high = std::max(high, b);
        }
    if (low > high) continue;
    HeatMap map{.name = names.name(std::get<0>(key), std::get<1>(key), std::get<2>(key)),
                .summary = summary ? summary(key) : "",
                .start_ns = start_ - origin_,
                .column_ns = column_ns_,
                .first_bucket = low};
    for (const Log2Histogram& column : columns)
      map.cells.emplace_back(column.begin() + low, column.begin() + high + 1);
    out.push_back(std::move(map));
  }
  return out;
}

}  // namespace incise::analyzer
