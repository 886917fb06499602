#include "analyzer/analyses/locks/go_mutex_holds.h"

#include <algorithm>

namespace incise::analyzer {

GoMutexHolds::GoMutexHolds(std::function<void(const CriticalSection&)> section)
    : section_(std::move(section)) {}

void GoMutexHolds::add(const format::LockInterval& row) {
  settleBefore(row.time);
  LockId lock{row.pid, row.address};
  auto [it, fresh] = mutexes_.try_emplace(lock);
  Mutex& m = it->second;
  if (fresh) {
    m.episode_start = row.time;
    m.episode_end = row.acquired_time;
    ends_.emplace(m.episode_end, lock);
    floors_.insert(m.floor = m.episode_start);
  } else if (row.acquired_time > m.episode_end) {
    auto [first, last] = ends_.equal_range(m.episode_end);
    ends_.erase(std::find_if(first, last, [&](const auto& e) { return e.second == lock; }));
    m.episode_end = row.acquired_time;
    ends_.emplace(m.episode_end, lock);
  }
  m.acquisitions.push_back({.goid = row.goid,
                            .tid = row.tid,
                            .request = row.time,
                            .time = row.acquired_time,
                            .stack_id = row.stack_id});
}

void GoMutexHolds::add(const format::LockRelease& row) {
  settleBefore(row.time);
  auto it = mutexes_.find(LockId{row.pid, row.address});
  if (it == mutexes_.end()) {
    ++counts_.unplaced_releases;
    return;
  }
  Mutex& m = it->second;
  // The releaser's last acquisition, and the last sign that someone else
  // held the mutex since: another goroutine's acquisition, or any release.
  const Acquisition* own = nullptr;
  uint64_t previous = m.previous;
  // The releaser's own unlock ended before it could take the mutex again.
  if (m.previous != 0 && sameGoroutine(m.previous_goid, m.previous_tid, row) &&
      m.previous_return <= row.time)
    previous = std::max(previous, m.previous_return);
  for (const Acquisition& a : m.acquisitions) {
    if (a.time > row.time) continue;  // still waiting: not this hold's
    if (sameGoroutine(a.goid, a.tid, row)) {
      if (!own || a.time > own->time) own = &a;
    } else {
      previous = std::max(previous, a.time);
    }
  }
  CriticalSection s{.lock = it->first,
                    .tid = row.tid,
                    .kind = row.lock_kind,
                    .stack_id = row.stack_id,
                    .end = row.time,
                    .goid = row.goid,
                    .go_slow_paths = true};
  if (own && own->time >= previous) {
    s.start = own->time;
    s.request = own->request;
    s.stack_id = own->stack_id;
    s.contended = true;
    s.start_from = HoldStart::kAcquired;
    ++counts_.acquired;
  } else if (previous != 0) {
    s.start = s.request = previous;
    s.start_from = HoldStart::kAfterPrevious;
    ++counts_.after_previous;
  } else {
    s.start = s.request = m.episode_start;
    s.start_from = HoldStart::kEpisodeStart;
    ++counts_.episode_start;
  }
  // Acquisitions up to now are spent: a later release is after this one.
  std::erase_if(m.acquisitions, [&](const Acquisition& a) { return a.time <= row.time; });
  m.previous = row.time;
  m.previous_return = row.return_time;
  m.previous_goid = row.goid;
  m.previous_tid = row.tid;
  setFloor(m, row.time);
  if (section_) section_(s);
}

void GoMutexHolds::settleBefore(uint64_t time) {
  // Rows come in request order: once one at `time` is added, no lockSlow
  // that entered before an episode's end is still to come, so a release
  // after the end lies in no recorded wait.
  while (!ends_.empty() && ends_.begin()->first < time) {
    auto it = mutexes_.find(ends_.begin()->second);
    ends_.erase(ends_.begin());
    close(it);
  }
}

uint64_t GoMutexHolds::pendingStart(const LockId& lock) const {
  auto it = mutexes_.find(lock);
  return it == mutexes_.end() ? UINT64_MAX : it->second.floor;
}

void GoMutexHolds::setFloor(Mutex& m, uint64_t floor) {
  floors_.erase(floors_.find(m.floor));
  floors_.insert(m.floor = floor);
}

void GoMutexHolds::close(std::map<LockId, Mutex>::iterator it) {
  floors_.erase(floors_.find(it->second.floor));
  mutexes_.erase(it);
}

}  // namespace incise::analyzer
