#include "recorder/sources/futex_wait_rows.h"

namespace incise::recorder {

void FutexWaitRows::onBlock(const FutexBlock& block) {
  Wait wait{.block = block};
  // A wake-up recorded since the thread last ran ends this block.
  if (auto early = early_wakes_.find(block.tid); early != early_wakes_.end()) {
    wait.wake = early->second;
    early_wakes_.erase(early);
  }
  // An owner /proc does not show (a joined thread that exited before this
  // record was read, a word that held no tid) stays unchecked: the analyzer
  // keeps it only if the trace knows it as a thread of the process.
  if (wait.block.holder_tid != 0 && is_thread_of_)
    wait.holder_checked = is_thread_of_(wait.block.pid, wait.block.holder_tid);
  if (auto previous = blocked_.find(block.tid); previous != blocked_.end()) forget(previous);
  if (format::waitObjectMayHaveHolder(block.object)) ++holder_waits_;
  blocked_.emplace(block.tid, wait);
}

void FutexWaitRows::forget(std::unordered_map<uint32_t, Wait>::iterator it) {
  if (format::waitObjectMayHaveHolder(it->second.block.object)) --holder_waits_;
  blocked_.erase(it);
}

void FutexWaitRows::onWake(const FutexWake& wake) {
  auto it = blocked_.find(wake.wakee_tid);
  if (it == blocked_.end()) {
    early_wakes_[wake.wakee_tid] = wake;
  } else if (!it->second.wake) {
    it->second.wake = wake;  // the first wake-up ends the wait; later ones find it woken
  }
}

format::LockInterval FutexWaitRows::rowOf(const Wait& wait, uint64_t end) const {
  const FutexBlock& b = wait.block;
  format::LockInterval row{
      .time = b.time,
      .acquired_time = end < b.time ? b.time : end,
      .pid = b.pid,
      .tid = b.tid,
      .address = b.address,
      .lock_kind = static_cast<uint64_t>(format::LockKind::kFutex),
      .flags = format::kLockContended | format::kLockContendedOnly | format::kLockFutexFacts,
      .stack_id = b.stack_id,
      .futex_op = b.op,
      .futex_value = b.value,
      .object = b.object,
      .holder_tid = b.holder_tid,
      .holder_state = b.holder_state,
      .goid = b.goid,
  };
  if (b.holder_tid != 0 && wait.holder_checked) row.flags |= format::kLockHolderChecked;
  if (wait.wake && wait.wake->releases && wait.wake->waker_tid != b.tid) {
    row.releaser_tid = wait.wake->waker_tid;
    row.releaser_stack_id = wait.wake->stack_id;
  }
  return row;
}

std::optional<format::LockInterval> FutexWaitRows::onSwitchIn(uint32_t tid, uint64_t time) {
  early_wakes_.erase(tid);
  auto it = blocked_.find(tid);
  if (it == blocked_.end()) return std::nullopt;
  format::LockInterval row = rowOf(it->second, time);
  forget(it);
  return row;
}

void FutexWaitRows::onThreadExit(uint32_t tid) {
  if (auto it = blocked_.find(tid); it != blocked_.end()) forget(it);
  early_wakes_.erase(tid);
}

std::vector<format::LockInterval> FutexWaitRows::finish(uint64_t time) {
  std::vector<format::LockInterval> rows;
  rows.reserve(blocked_.size());
  for (const auto& [tid, wait] : blocked_) {
    format::LockInterval row = rowOf(wait, time);
    row.flags |= format::kLockWaitUnfinished;
    rows.push_back(row);
  }
  blocked_.clear();
  holder_waits_ = 0;
  early_wakes_.clear();
  return rows;
}

}  // namespace incise::recorder
