// mergeByTime: the rows of several time-ordered streams of different kinds
// (TimeOrderedRows, or anything with peek() and pop()) visited in one time
// order. Each step takes the stream whose next row is earliest; on a tie the
// stream listed first goes first, so callers state their tie rule by the
// order of the arguments (a wake-up before the switch it causes). `before`
// sees each row's time first, so a replay can settle what ended before it.
//
// The one merge of kinds: the schedule replay (switches and wake-ups) and
// correlate's pass (locks, switches, samples, faults, wake-ups) both walk it.
//
//   mergeByTime([&](uint64_t now) { settle(now); },
//               timeStream(wakeups, [&](const format::Wakeup& w) { machine.onWakeup(w); }),
//               timeStream(switches, [&](const format::SchedSwitch& s) { machine.onSwitch(s); }));
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

namespace incise::analyzer {

template <typename Rows, typename Visit>
struct TimeStream {
  Rows& rows;
  Visit visit;
};

template <typename Rows, typename Visit>
TimeStream<Rows, Visit> timeStream(Rows& rows, Visit visit) {
  return {rows, std::move(visit)};
}

template <typename Before, typename... Streams>
void mergeByTime(Before&& before, Streams... streams) {
  for (;;) {
    bool any = false;
    uint64_t now = UINT64_MAX;
    auto earliest = [&](auto& stream) {
      if (const auto* row = stream.rows.peek()) {
        any = true;
        now = std::min<uint64_t>(now, row->time);
      }
    };
    (earliest(streams), ...);
    if (!any) return;
    before(now);
    bool taken = false;
    auto take = [&](auto& stream) {
      if (taken) return;
      const auto* row = stream.rows.peek();
      if (row == nullptr || row->time != now) return;
      stream.visit(*row);
      stream.rows.pop();
      taken = true;
    };
    (take(streams), ...);
  }
}

}  // namespace incise::analyzer
