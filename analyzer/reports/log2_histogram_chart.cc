#include "analyzer/reports/log2_histogram_chart.h"

#include <algorithm>
#include <cstdio>

#include "analyzer/render/table.h"

namespace incise::analyzer {
namespace {

// [first, last] non-empty buckets; first > last when all are empty.
std::pair<size_t, size_t> usedRange(const Log2Histogram& histogram) {
  size_t first = kLog2Buckets;
  size_t last = 0;
  for (size_t i = 0; i < kLog2Buckets; ++i) {
    if (histogram[i] == 0) continue;
    first = std::min(first, i);
    last = i;
  }
  return {first, last};
}

}  // namespace

std::string compactDuration(uint64_t ns) {
  static constexpr struct {
    double scale;
    const char* unit;
  } kUnits[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}};
  char buffer[32];
  for (const auto& u : kUnits) {
    if (static_cast<double>(ns) >= u.scale) {
      std::snprintf(buffer, sizeof buffer, "%.3g%s", static_cast<double>(ns) / u.scale, u.unit);
      return buffer;
    }
  }
  return std::to_string(ns) + "ns";
}

void renderLog2Histogram(const Log2Histogram& histogram, std::ostream& out,
                         const std::string& indent, size_t bar_width, const std::string& label) {
  auto [first, last] = usedRange(histogram);
  if (first > last) return;
  uint64_t most = *std::max_element(histogram.begin(), histogram.end());
  Table table({{indent + label, Align::kLeft}, {"", Align::kLeft}, {"COUNT", Align::kRight}});
  for (size_t i = first; i <= last; ++i) {
    size_t length =
        static_cast<size_t>((static_cast<double>(histogram[i]) * static_cast<double>(bar_width)) /
                                static_cast<double>(most) +
                            0.5);
    if (histogram[i] > 0) length = std::max<size_t>(length, 1);
    std::string bar = "|";
    for (size_t n = 0; n < bar_width; ++n) bar += n < length ? "\u2588" : " ";
    bar += "|";
    table.addRow({indent + compactDuration(log2BucketStart(i)), bar, formatCount(histogram[i])});
  }
  table.render(out);
}

nlohmann::json log2HistogramJson(const Log2Histogram& histogram) {
  nlohmann::json buckets = nlohmann::json::array();
  auto [first, last] = usedRange(histogram);
  for (size_t i = first; i <= last && i < kLog2Buckets; ++i) {
    buckets.push_back(
        {{"from_ns", log2BucketStart(i)}, {"to_ns", log2BucketEnd(i)}, {"count", histogram[i]}});
  }
  return buckets;
}

}  // namespace incise::analyzer
