#include "analyzer/analyses/locks/critical_sections.h"

#include <algorithm>
#include <tuple>

#include "analyzer/analyses/locks/go_mutex_holds.h"

namespace incise::analyzer {
namespace {

bool has(uint64_t flags, format::LockFlags flag) {
  return (flags & flag) != 0;
}

}  // namespace

LockRowStream::LockRowStream(LockRowSinks sinks)
    : sinks_(std::move(sinks)), go_holds_(std::make_unique<GoMutexHolds>(sinks_.section)) {}

LockRowStream::~LockRowStream() = default;

bool LockRowStream::WakesLater::operator()(const FutexWait& a, const FutexWait& b) const {
  return std::tie(a.end, a.lock, a.tid, a.arrival) > std::tie(b.end, b.lock, b.tid, b.arrival);
}

void LockRowStream::add(const format::LockInterval& row) {
  settleWokenBefore(row.time);
  bool released = row.release_time != 0;
  if (row.acquired_time < row.time || (released && row.release_time < row.acquired_time)) {
    ++counts_.malformed;
    return;
  }
  if (has(row.flags, format::kLockTryFailed)) {
    ++counts_.try_failed;
    return;
  }
  LockId lock{row.pid, row.address};
  bool contended_only = has(row.flags, format::kLockContendedOnly);
  bool contended = contended_only || has(row.flags, format::kLockContended);
  (contended_only ? saw_contended_ : saw_all_) = true;
  if (sinks_.acquisition) {
    sinks_.acquisition({.lock = lock,
                        .tid = row.tid,
                        .kind = row.lock_kind,
                        .stack_id = row.stack_id,
                        .time = row.time,
                        .wait_ns = row.acquired_time - row.time,
                        .contended = contended});
  }
  if (contended && sinks_.wait) {
    sinks_.wait({.lock = lock,
                 .tid = row.tid,
                 .kind = row.lock_kind,
                 .stack_id = row.stack_id,
                 .start = row.time,
                 .end = row.acquired_time,
                 .releaser_tid = row.releaser_tid,
                 // A futex wait's goid names what its thread ran: the
                 // thread waited, and its wake-up ends the wait.
                 .goid = has(row.flags, format::kLockFutexFacts) ? 0 : row.goid});
  }
  if (contended_only && has(row.flags, format::kLockGoSlowPath)) {
    go_holds_->add(row);
    return;
  }
  if (contended_only) {
    FutexWait wait{.lock = lock,
                   .start = row.time,
                   .end = row.acquired_time,
                   .stack_id = row.stack_id,
                   .arrival = arrivals_++,
                   .tid = static_cast<uint32_t>(row.tid),
                   .releaser_tid = static_cast<uint32_t>(row.releaser_tid),
                   .kind = static_cast<uint8_t>(row.lock_kind)};
    in_progress_.push_back(wait);
    std::push_heap(in_progress_.begin(), in_progress_.end(), WakesLater{});
    locks_[lock].waiting_since.insert(wait.start);
    pin(wait.tid, wait.end);  // its acquisition, once woken
    if (wait.releaser_tid != 0 && wait.releaser_tid != wait.tid) pin(wait.releaser_tid, wait.start);
    return;
  }
  if (has(row.flags, format::kLockRecursive)) {
    ++counts_.recursive;
    return;
  }
  if (!released) {
    ++counts_.unreleased;
    return;
  }
  if (sinks_.section) {
    sinks_.section({.lock = lock,
                    .tid = row.tid,
                    .kind = row.lock_kind,
                    .stack_id = row.stack_id,
                    .request = row.time,
                    .start = row.acquired_time,
                    .end = row.release_time,
                    .contended = contended});
  }
}

void LockRowStream::add(const format::LockRelease& row) {
  settleWokenBefore(row.time);
  go_holds_->add(row);
}

void LockRowStream::settleBefore(uint64_t time) {
  settleWokenBefore(time);
  go_holds_->settleBefore(time);
}

LockRowCounts LockRowStream::finish() {
  settleWokenBefore(UINT64_MAX);
  go_holds_->settleBefore(UINT64_MAX);
  counts_.go_holds = go_holds_->counts();
  if (!in_progress_.empty()) {  // woken at UINT64_MAX
    std::sort_heap(in_progress_.begin(), in_progress_.end(), WakesLater{});
    std::reverse(in_progress_.begin(), in_progress_.end());
    for (const FutexWait& wait : in_progress_) inferHolder(wait, locks_[wait.lock]);
  }
  in_progress_ = {};
  locks_.clear();
  pins_.clear();
  counts_.mode = saw_all_ && saw_contended_ ? LockRecordingMode::kMixed
                 : saw_all_                 ? LockRecordingMode::kAll
                 : saw_contended_           ? LockRecordingMode::kContended
                                            : LockRecordingMode::kNone;
  return counts_;
}

// Every wait woken before `time` has arrived (rows come in request order and
// a wait wakes after its request), and with it every wait sharing its wake:
// each lock's wakes are settled in order, whole.
void LockRowStream::settleWokenBefore(uint64_t time) {
  while (!in_progress_.empty() && in_progress_.front().end < time) {
    std::pop_heap(in_progress_.begin(), in_progress_.end(), WakesLater{});
    FutexWait wait = in_progress_.back();
    in_progress_.pop_back();
    auto it = locks_.find(wait.lock);
    LockState& lock = it->second;
    inferHolder(wait, lock);
    bool wake_settled = in_progress_.empty() || in_progress_.front().end != wait.end ||
                        in_progress_.front().lock != wait.lock;
    if (!wake_settled) continue;
    // Only the acquisitions at this wake can start a section at a later one.
    std::erase_if(lock.holdings, [&](const Holding& h) {
      if (h.time == lock.wake) return false;
      unpin(h.tid, h.time);
      return true;
    });
    if (lock.holdings.empty() && lock.waiting_since.empty()) locks_.erase(it);
  }
}

// Contended mode: each wake tells that the releaser held the lock until the
// wake. Its section starts at the releaser's acquisition since the lock's
// last release, if one was recorded, else at the later of the wait start and
// that release.
void LockRowStream::inferHolder(const FutexWait& wait, LockState& lock) {
  lock.waiting_since.erase(lock.waiting_since.find(wait.start));
  if (!lock.woken || lock.wake != wait.end) {
    if (lock.woken) lock.last_release = lock.wake;
    lock.woken = true;
    lock.wake = wait.end;
    lock.releasers.clear();
  }
  uint64_t releaser = wait.releaser_tid;
  if (releaser != 0 && releaser != wait.tid) unpin(releaser, wait.start);
  if (releaser != 0 && releaser != wait.tid &&
      std::find(lock.releasers.begin(), lock.releasers.end(), releaser) == lock.releasers.end()) {
    lock.releasers.push_back(releaser);
    CriticalSection section{.lock = wait.lock, .tid = releaser, .kind = wait.kind};
    section.end = wait.end;
    section.inferred = true;
    auto previous = std::find_if(lock.holdings.begin(), lock.holdings.end(),
                                 [&](const Holding& h) { return h.tid == releaser; });
    if (previous != lock.holdings.end() && previous->time >= lock.last_release) {
      section.start = previous->time;
      section.request = previous->request;
      section.stack_id = previous->stack_id;
      section.contended = true;
    } else {
      section.start = std::max(wait.start, lock.last_release);
      section.request = section.start;
    }
    if (section.start <= section.end) {
      ++counts_.inferred_sections;
      if (sinks_.section) sinks_.section(section);
    }
  }
  auto held = std::find_if(lock.holdings.begin(), lock.holdings.end(),
                           [&](const Holding& h) { return h.tid == wait.tid; });
  if (held == lock.holdings.end()) {
    held = lock.holdings.insert(lock.holdings.end(), Holding{.tid = wait.tid});
  } else {
    unpin(held->tid, held->time);
  }
  *held = {wait.tid, wait.end, wait.start, wait.stack_id};  // pinned since the wait arrived
}

void LockRowStream::pin(uint64_t tid, uint64_t time) {
  pins_[tid].insert(time);
}

void LockRowStream::unpin(uint64_t tid, uint64_t time) {
  auto it = pins_.find(tid);
  it->second.erase(it->second.find(time));
  if (it->second.empty()) pins_.erase(it);
}

uint64_t LockRowStream::pendingSectionStart(uint64_t tid) const {
  // Which thread ends a Go hold is known only at its release.
  uint64_t go = go_holds_->pendingStart();
  auto it = pins_.find(tid);
  return it == pins_.end() ? go : std::min(go, *it->second.begin());
}

uint64_t LockRowStream::pendingSectionStart(const LockId& lock) const {
  uint64_t go = go_holds_->pendingStart(lock);
  auto it = locks_.find(lock);
  if (it == locks_.end()) return go;
  uint64_t start =
      it->second.waiting_since.empty() ? UINT64_MAX : *it->second.waiting_since.begin();
  for (const Holding& h : it->second.holdings) start = std::min(start, h.time);
  return std::min(start, go);
}

LockTimelineBuilder::LockTimelineBuilder(bool keep_acquisitions)
    : stream_(std::make_unique<LockRowStream>(LockRowSinks{
          .acquisition = keep_acquisitions ? std::function<void(const Acquisition&)>(
                                                 [this](const Acquisition& a) {
                                                   timeline_.acquisitions.push_back(a);
                                                 })
                                           : nullptr,
          .section = [this](const CriticalSection& s) { timeline_.sections.push_back(s); },
          .wait = [this](const LockWait& w) { timeline_.waits.push_back(w); }})) {}

LockTimelineBuilder::~LockTimelineBuilder() = default;

void LockTimelineBuilder::add(const format::LockInterval& row) {
  stream_->add(row);
}

LockTimeline LockTimelineBuilder::finish() {
  static_cast<LockRowCounts&>(timeline_) = stream_->finish();
  std::sort(timeline_.sections.begin(), timeline_.sections.end(),
            [](const CriticalSection& a, const CriticalSection& b) {
              return std::tie(a.tid, a.start, a.end, a.lock) <
                     std::tie(b.tid, b.start, b.end, b.lock);
            });
  std::sort(
      timeline_.waits.begin(), timeline_.waits.end(), [](const LockWait& a, const LockWait& b) {
        return std::tie(a.lock, a.start, a.end, a.tid) < std::tie(b.lock, b.start, b.end, b.tid);
      });
  return std::move(timeline_);
}

LockTimeline buildLockTimeline(std::span<const format::LockInterval> rows) {
  LockTimelineBuilder builder;
  for (const format::LockInterval& row : rows) builder.add(row);
  return builder.finish();
}

const char* lockModeName(LockRecordingMode mode) {
  switch (mode) {
    case LockRecordingMode::kAll:
      return "all";
    case LockRecordingMode::kContended:
      return "contended";
    case LockRecordingMode::kMixed:
      return "mixed";
    case LockRecordingMode::kNone:
      break;
  }
  return "none";
}

}  // namespace incise::analyzer
