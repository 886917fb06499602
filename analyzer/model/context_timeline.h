// ContextTimeline: which value of one context (--context NAME=SYMBOL at
// record time, such as a request id) each thread held at each moment,
// built once from the context's change rows.
//
// A change row says its thread's value changed after `since` (the
// thread's last read of the previous value) and by `time` (the first read
// of the new one). The thread writes its own variable, so the change
// happened while it ran: it is placed halfway through the thread's on-CPU
// time between the two reads, halfway between them when no run is known,
// and never at or before `since` (that read saw the old value). A thread's
// first read (since 0) starts its value at the read. A value holds from
// where it is placed (that nanosecond included) until the thread's next
// change or its exit. Before a thread's first read and after its exit (its
// tid may be reused) its value is unknown: valueAt says nullopt. Value 0 is
// a value like any other (for a request id, "no request").
//
// Memory: 24 bytes per change row and exit; a lookup is a hash lookup and
// a binary search over that thread's changes.
//
//   ContextTimeline timeline = ContextTimeline::build(rows, on_cpu, exits);
//   std::optional<uint64_t> value = timeline.valueAt(tid, sample.time);
//   timeline.forEachStretch([](const ContextStretch& s) { ... s.value, s.start, s.end ... });
//   timeline.changesInside(tid, span.start, span.end, cuts);   // where to split a span
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/model/context_value_text.h"
#include "analyzer/model/time_range.h"
#include "base/status.h"
#include "format/event_kinds.h"
#include "format/metadata.h"

namespace incise::analyzer {

// One value held by one thread, [start, end); end is UINT64_MAX when
// nothing ended it (no later change, no exit).
struct ContextStretch {
  uint32_t tid = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t value = 0;
};

class ContextTimeline {
 public:
  // Where a change row's reads bound its change: [since, time], or
  // [time, time] for a first read. The on-CPU pieces build() takes are
  // those of the row's thread inside this range.
  static TimeRange changeWindow(const format::ContextChange& row);
  // Where the row's new value is taken to start, given where its thread ran
  // inside changeWindow(row) (in time order).
  static uint64_t changeTime(const format::ContextChange& row, const std::vector<TimeRange>& ran);

  // `rows`: the change rows of one context; `ran[i]`: rows[i]'s on-CPU
  // pieces (empty when unknown); `exits`: the times threads exited, by tid;
  // `text`: how the context's values are written (the rows' value_high noted in it).
  static ContextTimeline build(const std::vector<format::ContextChange>& rows,
                               const std::vector<std::vector<TimeRange>>& ran,
                               const std::unordered_multimap<uint32_t, uint64_t>& exits,
                               ContextValueText text = {});

  const ContextValueText& text() const { return text_; }

  // The value `tid` held at `time`; nullopt when unknown.
  std::optional<uint64_t> valueAt(uint32_t tid, uint64_t time) const;
  // Every known value's stretch, each thread's in time order (threads in no order).
  void forEachStretch(const std::function<void(const ContextStretch&)>& visit) const;
  // Where `tid`'s value changes (or ends) strictly inside (start, end),
  // appended to `into` in time order: between two of them valueAt is constant.
  void changesInside(uint32_t tid, uint64_t start, uint64_t end, std::vector<uint64_t>& into) const;

 private:
  struct Point {
    uint64_t at = 0;
    uint64_t value = 0;
    bool known = false;  // false: the thread exited here
  };
  std::unordered_map<uint32_t, std::vector<Point>> threads_;
  ContextValueText text_;
};

// The slot of context `name` in the trace's header (its --context options,
// in order); an Error naming the contexts the trace has otherwise.
Result<size_t> contextSlot(const format::Header& header, std::string_view name);

}  // namespace incise::analyzer
