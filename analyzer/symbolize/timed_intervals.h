// TimedIntervals: "which range covered this address at this time?" for
// ranges that arrive over time and may overlap — memory mappings of a process
// (a later mmap replaces an earlier one where they overlap) and JIT perf-map
// entries (a later snapshot reuses an address from its own time on).
//
// Among the ranges containing the address whose time is <= the query time,
// the latest wins (ties: the one added last). The answer comes with the time
// window over which it stays the answer, so callers can cache it and ask
// again only when a query falls outside.
//
//   TimedIntervals<std::string> maps;
//   maps.add(0x1000, 0x2000, /*time=*/10, "old");
//   maps.add(0x1000, 0x2000, /*time=*/50, "new");
//   maps.finish();
//   maps.find(0x1800, 20).value -> "old", valid over [10, 50)
//
// Lookup is a binary search plus a backward walk over ranges that start
// earlier and still reach the address; TODO(perf): an interval tree if a
// process with huge overlapping reservations ever makes that walk long.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

namespace incise::analyzer {

template <typename T>
class TimedIntervals {
 public:
  static constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();

  struct Hit {
    const T* value = nullptr;  // null: nothing covers the address at that time
    uint64_t valid_from = 0;   // the same answer holds for times in [valid_from, valid_until)
    uint64_t valid_until = kForever;
    bool from_later = false;  // the or_earliest_later fallback answered
  };

  // [start, end); empty ranges are ignored.
  void add(uint64_t start, uint64_t end, uint64_t time, T value) {
    if (end <= start) return;
    ranges_.push_back({start, end, time, ranges_.size(), std::move(value)});
    finished_ = false;
  }

  // Call after the last add() and before find().
  void finish() {
    std::sort(ranges_.begin(), ranges_.end(),
              [](const Range& a, const Range& b) { return a.start < b.start; });
    starts_.resize(ranges_.size());
    reach_.resize(ranges_.size());
    uint64_t reach = 0;
    for (size_t i = 0; i < ranges_.size(); ++i) {
      starts_[i] = ranges_[i].start;
      reach = std::max(reach, ranges_[i].end);
      reach_[i] = reach;
    }
    finished_ = true;
  }

  // With `or_earliest_later`, an address covered only by ranges newer than
  // `time` gets the oldest of them (valid until its own time): for mappings
  // whose first sighting was timestamped a little after the first samples.
  Hit find(uint64_t address, uint64_t time, bool or_earliest_later = false) const {
    Hit hit;
    const Range* best = nullptr;
    const Range* earliest_later = nullptr;
    const auto after = std::upper_bound(starts_.begin(), starts_.end(), address);
    for (auto i = static_cast<size_t>(after - starts_.begin()); i > 0 && reach_[i - 1] > address;
         --i) {
      const Range& range = ranges_[i - 1];
      if (range.end <= address) continue;
      if (range.time <= time) {
        if (!best || std::tie(range.time, range.order) > std::tie(best->time, best->order)) {
          best = &range;
        }
      } else {
        hit.valid_until = std::min(hit.valid_until, range.time);
        if (!earliest_later || range.time < earliest_later->time ||
            (range.time == earliest_later->time && range.order > earliest_later->order)) {
          earliest_later = &range;
        }
      }
    }
    if (best) {
      hit.value = &best->value;
      hit.valid_from = best->time;
    } else if (or_earliest_later && earliest_later) {
      hit.value = &earliest_later->value;
      hit.valid_until = earliest_later->time;
      hit.from_later = true;
    }
    return hit;
  }

  bool finished() const { return finished_; }
  size_t size() const { return ranges_.size(); }

 private:
  struct Range {
    uint64_t start;
    uint64_t end;
    uint64_t time;
    size_t order;  // insertion order breaks ties between equal times
    T value;
  };
  std::vector<Range> ranges_;
  std::vector<uint64_t> starts_;
  std::vector<uint64_t> reach_;  // max end over ranges_[0..i]: where the backward walk stops
  bool finished_ = true;
};

}  // namespace incise::analyzer
