// TimeOrderedRows: the rows of one kind that pass the trace's filter, in time
// order, holding only the chunks that overlap the current time.
//
// Trace::forEachRow hands rows over in file order, which is time order only
// within a chunk. Reports that replay time (the scheduler state machine, the
// lock correlation) need one global order; sorting every row would make their
// memory grow with the trace. Here chunk refs are sorted by min_time and a
// chunk is decoded only when the merge reaches its min_time; each decoded
// chunk is one sorted run, and runs are merged on a small heap keyed by
// (time, chunk's file order), so ties keep file order exactly like a stable
// sort of all rows in file order. A run's rows are freed when it is used up.
//
// Memory: the rows of the chunks whose [min_time, max_time] overlap the
// current time, plus one chunk decoded ahead on another thread (streams of
// 2^20 rows or more, unless the trace was opened with threads = 1). Our
// recorder writes each kind's chunks one after the other, so that is 1-2
// chunks; a crafted file whose chunks all overlap degrades to every row at
// once, never worse than sorting them all. maxHeldRows() is the high-water
// mark, for tests and measurements.
//
// Damaged chunks are skipped and counted (Trace::losses), used rows are
// counted per kind, and the progress bar advances as with forEachRow. The
// order assumes each chunk header's min_time is right (the writer computes
// it); if a crafted one lies, its rows come out late (out of order), and
// outOfOrderRows() says how many. Cpu samples of -g dwarf / hybrid traces get
// their unwound stack id, unwound on the decoding thread; only one cpu-sample
// stream of a trace may be open at a time (it uses unwinding worker 0).
//
//   TimeOrderedRows<format::SchedSwitch> switches(trace);
//   for (const format::SchedSwitch* s; (s = switches.peek()) != nullptr; switches.pop()) {
//     machine.onSwitch(*s);
//   }
//   // Merging kinds: a stream each, the progress bar on one, merged by
//   // mergeByTime (time_merge.h).
//   TimeOrderedRows<format::Wakeup> wakeups(trace, /*progress=*/false);
//   // Every row of the file, whatever the filter (a report that explains the
//   // filtered threads by others' rows, as correlate does):
//   TimeOrderedRows<format::SchedSwitch> all(trace, false, LookAhead::kBigStreams, RowScope::kAll);
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <vector>

#include "analyzer/model/trace.h"
#include "analyzer/model/unwound_stacks.h"
#include "format/reader.h"

namespace incise::analyzer {

class ProgressBar;

// When to decode the next chunk on another thread while this one is used.
enum class LookAhead { kNever, kBigStreams, kAlways };

// Which rows: those that pass the trace's filter, or every row of the file.
enum class RowScope { kFiltered, kAll };

// The chunk half of TimeOrderedRows, independent of the row type: the chunks
// of one kind that overlap the trace's window, by min_time (then file order),
// decoded one at a time, maybe with one decoded ahead.
class TimeOrderedChunks {
 public:
  TimeOrderedChunks(Trace& trace, format::EventKind kind, bool progress, LookAhead look_ahead,
                    RowScope scope = RowScope::kFiltered,
                    format::ColumnSet wanted = format::ColumnSet::all());
  ~TimeOrderedChunks();
  TimeOrderedChunks(const TimeOrderedChunks&) = delete;
  TimeOrderedChunks& operator=(const TimeOrderedChunks&) = delete;

  bool done() const { return next_ >= refs_.size(); }
  // min_time of the next chunk to decode; only when !done().
  uint64_t nextMinTime() const { return refs_[next_].min_time; }

  struct Decoded {
    Result<format::Chunk> chunk = Error("not decoded");
    std::unique_ptr<UnwoundChunk> unwound;  // -g dwarf / hybrid cpu samples only
    uint64_t file_order = 0;                // index of the chunk among its kind, in the file
  };
  // Decodes the next chunk (only when !done()). A damaged one is counted in
  // the trace's losses and comes back with an error in `chunk`.
  Decoded decodeNext();

 private:
  Decoded decode(size_t index) const;

  Trace& trace_;
  format::EventKind kind_;
  RowScope scope_;
  format::ColumnSet columns_;  // decoded
  bool unwind_ = false;
  std::vector<format::ChunkRef> refs_;  // by min_time, then file order
  std::vector<uint64_t> file_order_;    // per refs_ entry
  size_t next_ = 0;
  bool look_ahead_ = false;
  std::future<Decoded> ahead_;  // refs_[next_] decoding on another thread, when valid
  std::unique_ptr<ProgressBar> progress_;
};

template <typename Row>
class TimeOrderedRows {
 public:
  // `progress`: show the progress bar (false for the second of two merged
  // streams). Threads = 1 in the trace's options means LookAhead::kNever.
  // `columns`: the fields the report reads (Trace::decodedColumns); the
  // others read as 0.
  explicit TimeOrderedRows(Trace& trace, bool progress = true,
                           LookAhead look_ahead = LookAhead::kBigStreams,
                           RowScope scope = RowScope::kFiltered,
                           format::ColumnSet columns = format::ColumnSet::all())
      : trace_(trace),
        scope_(scope),
        chunks_(trace, Row::kKind, progress, look_ahead, scope, columns) {}

  // The next row in time order, or null at the end; valid until pop().
  const Row* peek() {
    admit();
    if (heap_.empty()) return nullptr;
    const Run& run = runs_[heap_.front().run];
    return &run.rows[run.next];
  }
  // Drops the row peek() returned (peek() first).
  void pop();

  // Rows of decoded chunks not yet used up (their memory), and its high water.
  uint64_t heldRows() const { return held_; }
  uint64_t maxHeldRows() const { return max_held_; }
  // Rows that came out before a row with a later time had already gone:
  // only a chunk whose header's min_time lies makes any.
  uint64_t outOfOrderRows() const { return out_of_order_; }

 private:
  struct Run {
    std::vector<Row> rows;
    size_t next = 0;
  };
  struct Head {
    uint64_t time;
    uint64_t file_order;  // ties keep file order
    uint32_t run;
  };
  static bool later(const Head& a, const Head& b) {
    return a.time != b.time ? a.time > b.time : a.file_order > b.file_order;
  }
  // Decodes every chunk that may hold a row at or before the earliest head.
  void admit();
  void addRun(const TimeOrderedChunks::Decoded& decoded);

  Trace& trace_;
  RowScope scope_;
  TimeOrderedChunks chunks_;
  std::vector<Run> runs_;
  std::vector<uint32_t> free_runs_;
  std::vector<Head> heap_;  // min-heap on (time, file order)
  uint64_t held_ = 0;
  uint64_t max_held_ = 0;
  uint64_t last_time_ = 0;
  uint64_t out_of_order_ = 0;
};

// ---- templates ---------------------------------------------------------------

template <typename Row>
void TimeOrderedRows<Row>::admit() {
  while (!chunks_.done() && (heap_.empty() || chunks_.nextMinTime() <= heap_.front().time)) {
    TimeOrderedChunks::Decoded decoded = chunks_.decodeNext();
    if (decoded.chunk) addRun(decoded);
  }
}

template <typename Row>
void TimeOrderedRows<Row>::addRun(const TimeOrderedChunks::Decoded& decoded) {
  std::vector<Row> rows;
  rows.reserve(decoded.chunk->rows());  // at most the chunk's: grown, it would be copied ~15 times
  trace_.countUsed(Row::kKind, trace_.forEachPassingRow<Row>(
                                   *decoded.chunk, decoded.unwound.get(), scope_ == RowScope::kAll,
                                   [&](const Row& row) { rows.push_back(row); }));
  if (rows.empty()) return;
  auto earlier = [](const Row& a, const Row& b) { return a.time < b.time; };
  if (!std::is_sorted(rows.begin(), rows.end(), earlier))
    std::stable_sort(rows.begin(), rows.end(), earlier);
  uint32_t slot;
  if (!free_runs_.empty()) {
    slot = free_runs_.back();
    free_runs_.pop_back();
  } else {
    slot = static_cast<uint32_t>(runs_.size());
    runs_.emplace_back();
  }
  held_ += rows.size();
  max_held_ = std::max(max_held_, held_);
  heap_.push_back({rows.front().time, decoded.file_order, slot});
  runs_[slot] = Run{std::move(rows), 0};
  std::push_heap(heap_.begin(), heap_.end(), later);
}

template <typename Row>
void TimeOrderedRows<Row>::pop() {
  if (heap_.empty()) return;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Head& head = heap_.back();
  Run& run = runs_[head.run];
  if (run.rows[run.next].time < last_time_) ++out_of_order_;
  last_time_ = std::max(last_time_, run.rows[run.next].time);
  if (++run.next < run.rows.size()) {
    head.time = run.rows[run.next].time;
    std::push_heap(heap_.begin(), heap_.end(), later);
    return;
  }
  held_ -= run.rows.size();
  run = Run{};  // frees the rows
  free_runs_.push_back(head.run);
  heap_.pop_back();
}

}  // namespace incise::analyzer
