#include "analyzer/model/trace.h"

#include "analyzer/model/chunk_decoder.h"
#include "analyzer/model/progress.h"
#include "analyzer/model/unwound_stacks.h"
#include "analyzer/symbolize/symbolizer.h"

namespace incise::analyzer {
namespace {

// Reports that read more rows than this show a progress bar (if slow enough).
constexpr uint64_t kProgressRows = 1u << 20;

uint64_t firstEventTime(const format::Reader& reader) {
  uint64_t first = UINT64_MAX;
  for (const auto& ref : reader.blocks()) {
    if (ref.block_type == format::BlockType::kEventChunk && ref.rows != 0) {
      first = std::min(first, ref.min_time);
    }
  }
  return first == UINT64_MAX ? 0 : first;
}

}  // namespace

Trace::~Trace() = default;

Result<std::unique_ptr<Trace>> Trace::open(const std::string& path, const TraceOptions& options) {
  auto reader = format::Reader::open(path);
  if (!reader) return reader.error().context(path);
  std::unique_ptr<Trace> trace(new Trace());
  trace->path_ = path;
  trace->options_ = options;
  trace->reader_ = reader.take();
  const format::Reader& r = *trace->reader_;

  trace->start_time_ = r.header().start_mono_ns != 0 ? r.header().start_mono_ns : firstEventTime(r);
  trace->end_time_ = std::max(trace->start_time_, r.endTime());
  // No --time: every row, even one stamped after the recorded end.
  trace->window_ = {0, UINT64_MAX};
  if (options.filter.window) {
    const RelativeWindow& w = *options.filter.window;
    trace->window_.start = trace->start_time_ + w.start_ns;
    trace->window_.end = w.end_ns == UINT64_MAX || w.end_ns > UINT64_MAX - trace->start_time_
                             ? UINT64_MAX
                             : trace->start_time_ + w.end_ns;
  }

  trace->names_ = ThreadNames(r.metadata());
  for (const auto& ref : r.chunks(format::EventKind::kProcessEvent)) {
    auto chunk = r.readChunk(ref, format::ColumnSet::all());
    if (!chunk) {
      ++trace->damaged_chunks_;
      continue;
    }
    for (size_t i = 0; i < chunk->rows(); ++i) {
      trace->names_.addProcessEvent(chunk->row<format::ProcessEvent>(i));
    }
  }
  for (const std::string& comm : options.filter.comms) {
    for (uint32_t tid : trace->names_.knownThreads()) {
      // Any name the thread (or its process) ever had; passesThread checks the time.
      for (uint64_t t : {uint64_t{0}, UINT64_MAX}) {
        if (trace->names_.threadName(tid, t) == comm) trace->comm_tids_.insert(tid);
      }
    }
    for (const auto& process : r.metadata().processes) {
      if (process.comm == comm) trace->comm_pids_.insert(process.pid);
    }
    for (const auto& thread : r.metadata().threads) {
      if (thread.comm == comm) trace->comm_tids_.insert(thread.tid);
    }
  }

  SymbolizerOptions symbolizer_options;
  symbolizer_options.symfs = options.symfs;
  symbolizer_options.debug_dirs = options.debug_dirs;
  symbolizer_options.names = options.names;
  trace->symbolizer_ = std::make_unique<Symbolizer>(r.metadata(), symbolizer_options);
  if (UnwoundStacks::wanted(r.header())) {
    unsigned workers = ChunkDecoder(r, options.threads).threads();
    trace->unwound_ = std::make_unique<UnwoundStacks>(r, workers);
  }
  return trace;
}

const format::StackTable& Trace::stacks() const {
  return unwound_ ? unwound_->stacks() : reader_->stacks();
}

uint64_t Trace::unwoundStackId(const format::CpuSample& row, const UnwoundChunk& unwound,
                               size_t i) {
  return unwound_->stackFor(row, unwound, i);
}

uint64_t Trace::durationNs() const {
  uint64_t end = std::min(window_.end, end_time_);
  uint64_t start = std::max(window_.start, start_time_);
  return end > start ? end - start : 0;
}

namespace {

// The columns Trace::passes reads, per kind: keep beside passes() below.
format::ColumnSet filterColumns(format::EventKind kind) {
  using format::EventKind;
  switch (kind) {
    case EventKind::kCpuSample: {
      using C = format::CpuSampleColumn;
      return {C::time, C::cpu, C::pid, C::tid};
    }
    case EventKind::kSchedSwitch: {
      using C = format::SchedSwitchColumn;
      return {C::time, C::cpu, C::prev_pid, C::prev_tid, C::next_pid, C::next_tid};
    }
    case EventKind::kWakeup: {
      using C = format::WakeupColumn;
      return {C::time,      C::cpu,       C::target_cpu, C::waker_pid,
              C::waker_tid, C::wakee_pid, C::wakee_tid};
    }
    case EventKind::kLock: {
      using C = format::LockIntervalColumn;
      return {C::time, C::acquired_time, C::release_time, C::pid, C::tid};
    }
    case EventKind::kPageFault: {
      using C = format::PageFaultColumn;
      return {C::time, C::cpu, C::pid, C::tid};
    }
    case EventKind::kProcessEvent: {
      using C = format::ProcessEventColumn;
      return {C::time, C::pid, C::tid};
    }
    case EventKind::kLost:
      return {format::LostColumn::time};
    case EventKind::kLatency: {
      using C = format::LatencyColumn;
      return {C::time, C::cpu, C::pid, C::tid};
    }
    case EventKind::kLatencyHistogram: {
      using C = format::LatencyHistogramColumn;
      return {C::time, C::end_time, C::pid};
    }
    case EventKind::kBlockSummary: {
      using C = format::BlockSummaryColumn;
      return {C::time, C::end_time, C::pid, C::tid};
    }
    case EventKind::kContextChange: {
      using C = format::ContextChangeColumn;
      return {C::time, C::pid, C::tid};
    }
    case EventKind::kLockRelease: {
      using C = format::LockReleaseColumn;
      return {C::time, C::pid, C::tid};
    }
    case EventKind::kAlloc: {
      using C = format::AllocationColumn;
      return {C::time, C::pid, C::tid};
    }
    case EventKind::kFree: {
      using C = format::FreeColumn;
      return {C::time, C::pid};
    }
    case EventKind::kWaitSummary: {
      using C = format::WaitSummaryColumn;
      return {C::time, C::end_time, C::pid, C::tid};
    }
  }
  return format::ColumnSet::all();
}

}  // namespace

bool Trace::unwinds(format::EventKind kind, format::ColumnSet wanted) const {
  return unwound_ && kind == format::EventKind::kCpuSample &&
         wanted.has(format::CpuSampleColumn::stack_id);
}

format::ColumnSet Trace::decodedColumns(format::EventKind kind, format::ColumnSet wanted) const {
  if (wanted.isAll()) return wanted;
  format::ColumnSet columns = wanted | filterColumns(kind);
  if (unwinds(kind, wanted)) {
    using C = format::CpuSampleColumn;
    columns = columns | format::ColumnSet{C::stack_id,   C::user_ip, C::user_sp, C::user_bp,
                                          C::user_stack, C::pid,     C::time};
  }
  return columns;
}

void Trace::forEachChunk(format::EventKind kind, format::ColumnSet wanted,
                         const ChunkVisit& visit) {
  std::vector<format::ChunkRef> refs = reader_->chunks(kind, window_);
  uint64_t total_rows = 0;
  for (const auto& ref : refs) total_rows += ref.rows;
  ProgressBar progress("reading " + std::string(format::kindName(kind)), total_rows,
                       options_.progress && total_rows >= kProgressRows);
  ChunkDecoder decoder(*reader_, options_.threads);
  ChunkDecoder::Prepare unwind;
  if (unwinds(kind, wanted)) {
    // Filtered-out samples are not unwound; passes() only reads.
    unwind = [this](format::Chunk& chunk, unsigned worker) {
      return std::unique_ptr<ChunkDecoder::Prepared>(unwound_->unwindChunk(
          chunk, worker, [this](const format::CpuSample& row) { return passes(row); }));
    };
  }
  decoder.run(
      refs, decodedColumns(kind, wanted), unwind,
      [&](const format::ChunkRef&, const format::Chunk& chunk, ChunkDecoder::Prepared* prepared) {
        visit(chunk, static_cast<const UnwoundChunk*>(prepared));
      },
      [&](const format::ChunkRef&, const Error&) { ++damaged_chunks_; }, &progress);
}

bool Trace::passesThread(uint64_t pid, uint64_t tid, uint64_t time) const {
  const Filter& f = options_.filter;
  if (!f.matchesIds(pid, tid)) return false;
  if (f.comms.empty()) return true;
  uint32_t tid32 = static_cast<uint32_t>(tid), pid32 = static_cast<uint32_t>(pid);
  if (comm_tids_.count(tid32) && f.comms.count(names_.threadName(tid32, time))) return true;
  return comm_pids_.count(pid32) && f.comms.count(names_.processName(pid32, time));
}

void Trace::restrictToContexts(std::vector<ContextTimeline> timelines) {
  where_timelines_ = std::move(timelines);
  // The rows read to build them placed the changes: they are not the report's events.
  used_.fill(0);
}

bool Trace::passesContext(uint64_t tid, uint64_t time) const {
  const std::vector<ContextCondition>& where = options_.filter.where;
  if (where_timelines_.size() != where.size()) return true;  // not installed yet
  for (size_t i = 0; i < where.size(); ++i) {
    std::optional<uint64_t> value = where_timelines_[i].valueAt(static_cast<uint32_t>(tid), time);
    if (!value || !where[i].matches(*value, where_timelines_[i].text().highOf(*value)))
      return false;
  }
  return true;
}

bool Trace::passes(const format::CpuSample& row) const {
  return inWindow(row.time) && options_.filter.matchesCpu(row.cpu) &&
         passesEvent(row.pid, row.tid, row.time);
}

bool Trace::passes(const format::SchedSwitch& row) const {
  // A switch belongs to both threads: keep it when either side matches.
  return inWindow(row.time) && options_.filter.matchesCpu(row.cpu) &&
         (passesThread(row.prev_pid, row.prev_tid, row.time) ||
          passesThread(row.next_pid, row.next_tid, row.time));
}

bool Trace::passes(const format::Wakeup& row) const {
  return inWindow(row.time) &&
         (options_.filter.matchesCpu(row.cpu) || options_.filter.matchesCpu(row.target_cpu)) &&
         (passesThread(row.wakee_pid, row.wakee_tid, row.time) ||
          passesThread(row.waker_pid, row.waker_tid, row.time));
}

bool Trace::passes(const format::LockInterval& row) const {
  // No cpu column: --cpu does not apply. An interval is in the window when it overlaps it.
  uint64_t last = std::max({row.time, row.acquired_time, row.release_time});
  return row.time <= window_.end && last >= window_.start &&
         passesEvent(row.pid, row.tid, row.time);
}

bool Trace::passes(const format::PageFault& row) const {
  return inWindow(row.time) && options_.filter.matchesCpu(row.cpu) &&
         passesEvent(row.pid, row.tid, row.time);
}

bool Trace::passes(const format::ProcessEvent& row) const {
  return inWindow(row.time) && passesThread(row.pid, row.tid, row.time);
}

bool Trace::passes(const format::Lost& row) const {
  return inWindow(row.time);
}

bool Trace::passes(const format::Latency& row) const {
  // A call is in the window when it starts there.
  return inWindow(row.time) && options_.filter.matchesCpu(row.cpu) &&
         passesEvent(row.pid, row.tid, row.time);
}

bool Trace::passes(const format::LatencyHistogram& row) const {
  // Counted per process: --tid and --cpu cannot apply; an interval overlapping the window is in.
  return row.time <= window_.end && row.end_time >= window_.start &&
         options_.filter.where.empty() && passesThread(row.pid, row.pid, row.time);
}

bool Trace::passes(const format::BlockSummary& row) const {
  // No cpu column: --cpu does not apply. Blocks counted over an interval
  // overlapping the window are in (summaries/trace_summaries.h prorates them).
  return row.time <= window_.end && row.end_time >= window_.start &&
         passesEvent(row.pid, row.tid, row.time);
}

bool Trace::passes(const format::WaitSummary& row) const {
  // Waits counted over an interval overlapping the window are in
  // (summaries/trace_summaries.h prorates them).
  return row.time <= window_.end && row.end_time >= window_.start &&
         passesEvent(row.pid, row.tid, row.time);
}

bool Trace::passes(const format::ContextChange& row) const {
  // A value holds from its row on: one read before the window still names
  // the thread's context inside it, so the window does not apply.
  return passesThread(row.pid, row.tid, row.time);
}

bool Trace::passes(const format::LockRelease& row) const {
  return row.time >= window_.start && row.time <= window_.end &&
         passesThread(row.pid, row.tid, row.time);
}

bool Trace::passes(const format::Allocation& row) const {
  return passesEvent(row.pid, row.tid, row.time);
}

bool Trace::passes(const format::Free& row) const {
  // Any thread may free a block: a free is matched to its allocation, which
  // the filters chose, by process and address.
  return row.time <= window_.end;
}

void Trace::forEachCounter(const CounterVisit& visit) {
  symbolizer_->counters().forEach(visit);
  if (!unwound_) return;
  unwound_->counters().forEach(
      [&](std::string_view name, CounterSeverity severity, std::string_view description,
          uint64_t value) { visit("unwind_" + std::string(name), severity, description, value); });
}

LossSummary Trace::losses() {
  LossSummary summary;
  summary.salvaged = !reader_->recovery().used_footer;
  for (format::EventKind kind : format::kAllEventKinds) {
    if (kind == format::EventKind::kLost) continue;
    std::string name(format::kindName(kind));
    if (uint64_t rows = reader_->rows(kind)) summary.rows_by_kind[name] = rows;
    if (uint64_t used = used_[static_cast<size_t>(kind)]) summary.used_by_kind[name] = used;
  }
  // Losses are counted over the whole trace, not the filter: a drop is not
  // attributed to a thread, so any of them may have hit the rows shown.
  for (const auto& ref : reader_->chunks(format::EventKind::kLost)) {
    auto chunk = reader_->readChunk(ref, format::ColumnSet::all());
    if (!chunk) {
      ++damaged_chunks_;
      continue;
    }
    for (size_t i = 0; i < chunk->rows(); ++i) {
      auto lost = chunk->row<format::Lost>(i);
      summary.lost_by_source[std::string(format::lostSourceName(lost.source))] += lost.count;
    }
  }
  summary.damaged_chunks = damaged_chunks_;
  return summary;
}

}  // namespace incise::analyzer
