#include "analyzer/analyses/summaries/summary_window.h"

#include <algorithm>
#include <cstdint>

namespace incise::analyzer {

namespace {

// value * part / whole, rounded to the nearest, without overflow for ns values.
uint64_t scaled(uint64_t value, uint64_t part, uint64_t whole) {
  return static_cast<uint64_t>(static_cast<long double>(value) * part / whole + 0.5L);
}

// Cuts the fields both kinds share; `scale` takes (part, whole) for the rest.
template <class Summary, class Scale>
bool cut(Summary& row, const format::TimeWindow& window, Scale scale) {
  if (row.count == 0 || row.end_time < row.time) return false;
  const uint64_t from = std::max(row.time, window.start);
  const uint64_t to = std::min(row.end_time, window.end);
  const uint64_t whole = row.end_time - row.time;
  if (whole == 0 || (from == row.time && to == row.end_time)) return from <= to;
  const uint64_t part = to > from ? to - from : 0;
  row.count = std::max<uint64_t>(1, scaled(row.count, part, whole));
  row.total_ns = scaled(row.total_ns, part, whole);
  scale(part, whole);
  row.time = from;
  row.end_time = to;
  return row.total_ns != 0;
}

}  // namespace

bool cutToWindow(format::BlockSummary& row, const format::TimeWindow& window) {
  return cut(row, window, [&](uint64_t part, uint64_t whole) {
    row.wakeups = scaled(row.wakeups, part, whole);
  });
}

bool cutToWindow(format::WaitSummary& row, const format::TimeWindow& window) {
  return cut(row, window, [](uint64_t, uint64_t) {});
}

}  // namespace incise::analyzer
