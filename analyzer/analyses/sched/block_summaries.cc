// Block summary rows, filtered and prorated to the window: see block_summaries.h.
#include "analyzer/analyses/sched/block_summaries.h"

#include <algorithm>

#include "analyzer/model/trace.h"

namespace incise::analyzer {

namespace {

// value * part / whole, rounded to the nearest, without overflow for ns values.
uint64_t scaled(uint64_t value, uint64_t part, uint64_t whole) {
  return static_cast<uint64_t>(static_cast<long double>(value) * part / whole + 0.5L);
}

}  // namespace

void forEachBlockSummary(Trace& trace,
                         const std::function<void(const format::BlockSummary&)>& visit) {
  const format::TimeWindow window = trace.window();
  trace.forEachRow<format::BlockSummary>([&](const format::BlockSummary& row) {
    if (row.count == 0 || row.end_time < row.time) return;
    uint64_t from = std::max(row.time, window.start), to = std::min(row.end_time, window.end);
    uint64_t whole = row.end_time - row.time;
    if (whole == 0 || (from == row.time && to == row.end_time)) {
      visit(row);
      return;
    }
    uint64_t part = to > from ? to - from : 0;
    format::BlockSummary cut = row;
    cut.time = from;
    cut.end_time = to;
    cut.count = std::max<uint64_t>(1, scaled(row.count, part, whole));
    cut.total_ns = scaled(row.total_ns, part, whole);
    cut.wakeups = scaled(row.wakeups, part, whole);
    if (cut.total_ns != 0) visit(cut);
  });
}

}  // namespace incise::analyzer
