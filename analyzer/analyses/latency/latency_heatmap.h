// Latency heat maps: per traced function, syscall, device and opcode, the
// calls of each time column and log2 latency bucket, for
// render/heat_map.h. Columns split [start, end) evenly (at most
// `max_columns`, each a round 1, 2 or 5 x 10^k ns and at least 1 ms); a row
// counts in the column of its start, a histogram row (--aggregate) in the
// column of its interval's middle.
//
//   LatencyHeatMapBuilder heat(trace.window().start, trace.window().end, trace.startTime());
//   trace.forEachRow<format::Latency>([&](const format::Latency& r) { heat.add(r); });
//   std::vector<HeatMap> maps = heat.finish(names, summaries);
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/analyses/distributions/log2_histogram.h"
#include "analyzer/analyses/latency/latency_names.h"
#include "analyzer/render/heat_map.h"
#include "format/event_kinds.h"

namespace incise::analyzer {

// The round column width that splits `span_ns` into at most `max_columns`.
uint64_t heatMapColumnNs(uint64_t span_ns, size_t max_columns);

class LatencyHeatMapBuilder {
 public:
  // [start, end): the times shown; `origin`: the trace start, times are shown from it.
  LatencyHeatMapBuilder(uint64_t start, uint64_t end, uint64_t origin, size_t max_columns = 150);
  void add(const format::Latency& row);
  void add(const format::LatencyHistogram& row);
  // One map per group, in the order of `order` (source, probe, detail keys;
  // groups not in it follow), each with `summary(key)` under its name.
  using Key = std::tuple<uint64_t, uint64_t, uint64_t>;
  std::vector<HeatMap> finish(const LatencyNames& names, const std::vector<Key>& order,
                              const std::function<std::string(const Key&)>& summary) const;

 private:
  void count(const Key& key, uint64_t time, uint64_t duration_bucket, uint64_t calls);

  uint64_t start_, end_, origin_, column_ns_;
  size_t columns_;
  std::map<Key, std::vector<Log2Histogram>> maps_;  // per column
};

}  // namespace incise::analyzer
