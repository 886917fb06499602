// Trace: one opened trace file as the reports see it.
//
// Wraps a format::Reader with what every report needs: the filter (pids,
// tids, comms, cpus, time window), thread and process names over time, the
// symbolizer, the loss summary, and parallel in-order chunk decoding with a
// progress bar. Reports never touch chunks or column numbers.
//
// Memory: forEachRow streams (one decoded chunk per decoding thread, times
// two, is alive at a time), so reports that aggregate while streaming stay
// bounded by what they aggregate (distinct stacks, threads, locks). Reports
// that need rows in time order read them with TimeOrderedRows
// (time_ordered_rows.h), which holds only the chunks overlapping the
// current time.
//
// Decoding errors are counted, not fatal: a chunk that fails to decode is
// skipped and shows up in losses().damaged_chunks (and so in the header).
//
//   auto trace = Trace::open("app.trace", options);
//   if (!trace) { std::cerr << trace.error().message() << "\n"; return 1; }
//   std::unordered_map<uint64_t, uint64_t> per_stack;
//   (*trace)->forEachRow<format::CpuSample>([&](const format::CpuSample& s) {
//     per_stack[s.stack_id] += 1;
//   });
//   std::string comm = (*trace)->threadName(43, start_time);
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "analyzer/model/context_timeline.h"
#include "analyzer/model/loss_summary.h"
#include "analyzer/model/thread_names.h"
#include "analyzer/model/trace_options.h"
#include "base/counters.h"
#include "base/status.h"
#include "format/reader.h"

namespace incise::analyzer {

class Symbolizer;
class UnwoundStacks;
struct UnwoundChunk;

class TimeOrderedChunks;
template <typename Row>
class TimeOrderedRows;

class Trace {
 public:
  static Result<std::unique_ptr<Trace>> open(const std::string& path, const TraceOptions& options);
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  // Every row of `Row`'s kind that passes the filter, in file order (which is
  // time order within a kind for a well-behaved recorder, not guaranteed).
  // `columns`: the fields `visit` reads (decodedColumns); the others read as 0.
  template <typename Row>
  void forEachRow(const std::function<void(const Row&)>& visit,
                  format::ColumnSet columns = format::ColumnSet::all());

  // What is decoded of `kind` for a report that reads `wanted`: those
  // columns, the ones the filter reads, and for cpu samples of -g dwarf /
  // hybrid traces the registers and stack copy the unwinder reads, only when
  // the report reads stack_id (a report that does not read stacks is not
  // unwound at all).
  format::ColumnSet decodedColumns(format::EventKind kind, format::ColumnSet wanted) const;
  // Whether cpu-sample rows read with `wanted` get their unwound stack ids.
  bool unwinds(format::EventKind kind, format::ColumnSet wanted) const;

  std::string threadName(uint32_t tid, uint64_t time) const { return names_.threadName(tid, time); }
  std::string processName(uint32_t pid, uint64_t time) const {
    return names_.processName(pid, time);
  }
  uint32_t pidOf(uint32_t tid) const { return names_.pidOf(tid); }
  const ThreadNames& names() const { return names_; }

  // With -g dwarf / hybrid, the file's stacks plus the unwound ones.
  const format::StackTable& stacks() const;
  Symbolizer& symbolizer() { return *symbolizer_; }
  const format::Reader& reader() const { return *reader_; }
  const format::Header& header() const { return reader_->header(); }
  const std::string& path() const { return path_; }
  const TraceOptions& options() const { return options_; }

  // Trace start (header clock) and end; the filter's window, when set, is
  // inside [startTime, endTime] and narrows durationNs().
  uint64_t startTime() const { return start_time_; }
  // `time` as ns since the trace's start (0 before it): how reports print times.
  uint64_t sinceStart(uint64_t time) const { return time > start_time_ ? time - start_time_ : 0; }
  uint64_t endTime() const { return end_time_; }
  format::TimeWindow window() const { return window_; }
  uint64_t durationNs() const;

  // Lost rows per source, rows per kind in the file and used by this report
  // so far, damaged chunks. Call after the report has read its rows.
  LossSummary losses();

  // Every counter of what the analysis could not do or did, as one list: the
  // symbolizer's, then (-g dwarf, hybrid) the unwinder's as "unwind_<name>".
  // Reports warn on the non-zero kDataLoss ones; JSON headers carry them all.
  using CounterVisit = std::function<void(std::string_view name, CounterSeverity severity,
                                          std::string_view description, uint64_t value)>;
  void forEachCounter(const CounterVisit& visit);

  // --where: the timelines of the filter's conditions (options().filter.where),
  // one per condition in its order. CommandLine::openTrace reads them (that
  // takes a schedule replay, an analysis) and installs them here; until
  // then no row is held to the conditions, so the rows that build the
  // timelines read as unfiltered; they are not counted as used.
  void restrictToContexts(std::vector<ContextTimeline> timelines);
  // The installed timelines (empty until restrictToContexts): for analyses
  // that split a thread's time where passesContext may change.
  const std::vector<ContextTimeline>& whereTimelines() const { return where_timelines_; }

  // Filter checks, public for tests and for reports that read rows another way.
  // --where applies to the rows of one thread's event (samples, lock rows,
  // faults, timed calls; block summaries by their first block); not to
  // switches and wake-ups, which replays need whole (they hold spans to
  // passesEvent instead), nor to process events and change rows. Latency
  // histograms have no thread: --where keeps none.
  bool passes(const format::CpuSample& row) const;
  bool passes(const format::SchedSwitch& row) const;
  bool passes(const format::Wakeup& row) const;
  bool passes(const format::LockInterval& row) const;
  bool passes(const format::PageFault& row) const;
  bool passes(const format::ProcessEvent& row) const;
  bool passes(const format::Lost& row) const;
  bool passes(const format::Latency& row) const;
  bool passes(const format::LatencyHistogram& row) const;
  bool passes(const format::BlockSummary& row) const;
  bool passes(const format::ContextChange& row) const;
  bool passes(const format::LockRelease& row) const;
  bool passes(const format::Allocation& row) const;
  bool passes(const format::Free& row) const;
  bool passes(const format::WaitSummary& row) const;
  // The thread part of the filter (--pid, --tid, --comm) alone: for reports
  // whose rows involve two threads (a switch) and that show one of them.
  bool passesThread(uint64_t pid, uint64_t tid, uint64_t time) const;
  // The --where part alone: `tid` held a matching value of every condition's context at `time`.
  bool passesContext(uint64_t tid, uint64_t time) const;
  // An event of thread `tid` at `time`: passesThread and passesContext.
  bool passesEvent(uint64_t pid, uint64_t tid, uint64_t time) const {
    return passesThread(pid, tid, time) && passesContext(tid, time);
  }

 private:
  friend class TimeOrderedChunks;
  template <typename Row>
  friend class TimeOrderedRows;

  Trace() = default;
  // The rows of a decoded chunk that pass the filter (every row with
  // `all`), with their unwound stack ids (`unwound`: see forEachChunk);
  // returns how many.
  template <typename Row, typename Visit>
  uint64_t forEachPassingRow(const format::Chunk& chunk, const UnwoundChunk* unwound, bool all,
                             Visit&& visit);
  // Decodes every chunk of `kind` overlapping the window, in file order; for
  // cpu samples of a dwarf/hybrid trace, `unwound` holds the chunk's samples
  // unwound on the decoding threads (null otherwise).
  using ChunkVisit = std::function<void(const format::Chunk&, const UnwoundChunk* unwound)>;
  void forEachChunk(format::EventKind kind, format::ColumnSet wanted, const ChunkVisit& visit);
  bool inWindow(uint64_t time) const { return time >= window_.start && time <= window_.end; }
  void countUsed(format::EventKind kind, uint64_t rows) {
    used_[static_cast<size_t>(kind)] += rows;
  }
  // A whole forEachRow pass used `rows`: a report that reads a kind twice
  // (a count, then the stacks of what it keeps) used those rows once.
  void countPassUsed(format::EventKind kind, uint64_t rows) {
    uint64_t& used = used_[static_cast<size_t>(kind)];
    used = std::max(used, rows);
  }

  std::string path_;
  TraceOptions options_;
  std::unique_ptr<format::Reader> reader_;
  std::unique_ptr<Symbolizer> symbolizer_;
  // -g dwarf / hybrid traces: samples with a stack copy are unwound as they stream.
  std::unique_ptr<UnwoundStacks> unwound_;
  uint64_t unwoundStackId(const format::CpuSample& row, const UnwoundChunk& unwound, size_t i);
  ThreadNames names_;
  uint64_t start_time_ = 0;
  uint64_t end_time_ = 0;
  format::TimeWindow window_;
  // --comm resolved once: threads and processes that ever had a matching name.
  std::unordered_set<uint32_t> comm_tids_;
  std::unordered_set<uint32_t> comm_pids_;
  std::vector<ContextTimeline> where_timelines_;  // empty: not installed
  std::array<uint64_t, 16> used_{};
  uint64_t damaged_chunks_ = 0;
};

// ---- templates ---------------------------------------------------------------

template <typename Row, typename Visit>
uint64_t Trace::forEachPassingRow(const format::Chunk& chunk, const UnwoundChunk* unwound, bool all,
                                  Visit&& visit) {
  uint64_t used = 0;
  for (size_t i = 0; i < chunk.rows(); ++i) {
    Row row = chunk.row<Row>(i);
    if (!all && !passes(row)) continue;
    if constexpr (std::is_same_v<Row, format::CpuSample>) {
      if (unwound) row.stack_id = unwoundStackId(row, *unwound, i);
    }
    ++used;
    visit(row);
  }
  return used;
}

template <typename Row>
void Trace::forEachRow(const std::function<void(const Row&)>& visit, format::ColumnSet columns) {
  uint64_t used = 0;
  forEachChunk(Row::kKind, columns, [&](const format::Chunk& chunk, const UnwoundChunk* unwound) {
    used += forEachPassingRow<Row>(chunk, unwound, /*all=*/false, visit);
  });
  countPassUsed(Row::kKind, used);
}

}  // namespace incise::analyzer
