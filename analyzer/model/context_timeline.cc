#include "analyzer/model/context_timeline.h"

#include <algorithm>
#include <string>

namespace incise::analyzer {

TimeRange ContextTimeline::changeWindow(const format::ContextChange& row) {
  const bool bounded = row.since != 0 && row.since < row.time;
  return {.start = bounded ? row.since : row.time, .end = row.time};
}

uint64_t ContextTimeline::changeTime(const format::ContextChange& row,
                                     const std::vector<TimeRange>& ran) {
  if (row.since == 0 || row.since >= row.time) return row.time;
  // The read at `since` saw the old value: the new one starts after it.
  const uint64_t earliest = row.since + 1;
  uint64_t on_cpu = 0;
  for (const TimeRange& piece : ran) on_cpu += piece.end - piece.start;
  if (on_cpu == 0) return std::max(earliest, row.since + (row.time - row.since) / 2);
  uint64_t half = on_cpu / 2;
  for (const TimeRange& piece : ran) {
    if (half <= piece.end - piece.start) return std::max(earliest, piece.start + half);
    half -= piece.end - piece.start;
  }
  return row.time;
}

ContextTimeline ContextTimeline::build(const std::vector<format::ContextChange>& rows,
                                       const std::vector<std::vector<TimeRange>>& ran,
                                       const std::unordered_multimap<uint32_t, uint64_t>& exits,
                                       ContextValueText text) {
  static const std::vector<TimeRange> kNoRuns;
  ContextTimeline timeline;
  timeline.text_ = std::move(text);
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::vector<TimeRange>& pieces = i < ran.size() ? ran[i] : kNoRuns;
    timeline.text_.noteHigh(rows[i].value, rows[i].value_high);
    timeline.threads_[static_cast<uint32_t>(rows[i].tid)].push_back(
        {.at = changeTime(rows[i], pieces), .value = rows[i].value, .known = true});
  }
  for (auto& [tid, points] : timeline.threads_) {
    auto [first, last] = exits.equal_range(tid);
    for (auto it = first; it != last; ++it) points.push_back({.at = it->second});
    // Ties keep this order: an exit at a change's nanosecond ends its value.
    std::stable_sort(points.begin(), points.end(),
                     [](const Point& a, const Point& b) { return a.at < b.at; });
  }
  return timeline;
}

std::optional<uint64_t> ContextTimeline::valueAt(uint32_t tid, uint64_t time) const {
  auto found = threads_.find(tid);
  if (found == threads_.end()) return std::nullopt;
  const std::vector<Point>& points = found->second;
  auto after = std::upper_bound(points.begin(), points.end(), time,
                                [](uint64_t t, const Point& point) { return t < point.at; });
  if (after == points.begin() || !(after - 1)->known) return std::nullopt;
  return (after - 1)->value;
}

void ContextTimeline::forEachStretch(
    const std::function<void(const ContextStretch&)>& visit) const {
  for (const auto& [tid, points] : threads_) {
    for (size_t i = 0; i < points.size(); ++i) {
      if (!points[i].known) continue;
      const uint64_t end = i + 1 < points.size() ? points[i + 1].at : UINT64_MAX;
      if (end > points[i].at)
        visit({.tid = tid, .start = points[i].at, .end = end, .value = points[i].value});
    }
  }
}

void ContextTimeline::changesInside(uint32_t tid, uint64_t start, uint64_t end,
                                    std::vector<uint64_t>& into) const {
  auto found = threads_.find(tid);
  if (found == threads_.end()) return;
  const std::vector<Point>& points = found->second;
  auto first = std::upper_bound(points.begin(), points.end(), start,
                                [](uint64_t t, const Point& point) { return t < point.at; });
  for (auto it = first; it != points.end() && it->at < end; ++it) into.push_back(it->at);
}

Result<size_t> contextSlot(const format::Header& header, std::string_view name) {
  const auto& contexts = header.options.contexts;
  std::string known;
  for (size_t slot = 0; slot < contexts.size(); ++slot) {
    if (contexts[slot].name == name) return slot;
    known += (known.empty() ? "" : ", ") + contexts[slot].name;
  }
  if (known.empty())
    return Error("the trace has no context values (record with --context " + std::string(name) +
                 "=SYMBOL)");
  return Error("the trace has no context '" + std::string(name) + "' (it has: " + known + ")");
}

}  // namespace incise::analyzer
