#include "recorder/sources/preload_sections.h"

namespace incise::recorder {

using format::LockInterval;
using preload::Record;
using preload::RecordKind;
using preload::RecordType;

static_assert(static_cast<int>(RecordKind::kMutex) == static_cast<int>(format::LockKind::kMutex));
static_assert(static_cast<int>(RecordKind::kRwlockRead) ==
              static_cast<int>(format::LockKind::kRwlockRead));
static_assert(static_cast<int>(RecordKind::kRwlockWrite) ==
              static_cast<int>(format::LockKind::kRwlockWrite));
static_assert(static_cast<int>(RecordKind::kSpin) == static_cast<int>(format::LockKind::kSpin));

namespace {

bool validKind(uint16_t kind) {
  return kind >= static_cast<uint16_t>(RecordKind::kMutex) &&
         kind <= static_cast<uint16_t>(RecordKind::kSpin);
}

}  // namespace

bool PreloadSections::onRecord(uint32_t pid, uint32_t tid, const Record& record) {
  switch (static_cast<RecordType>(record.type)) {
    case RecordType::kAcquire:
    case RecordType::kTryFailed:
      if (!validKind(record.kind) || record.request > record.time) return false;
      onAcquire(pid, tid, record);
      return true;
    case RecordType::kRelease:
      onRelease(pid, tid, record);
      return true;
  }
  return false;
}

void PreloadSections::onAcquire(uint32_t pid, uint32_t tid, const Record& record) {
  bool acquired = static_cast<RecordType>(record.type) == RecordType::kAcquire;
  LockInterval row{
      .time = record.request,
      .acquired_time = record.time,
      .release_time = acquired ? 0 : record.time,
      .pid = pid,
      .tid = tid,
      .address = record.address,
      .lock_kind = record.kind,
      .flags = acquired ? uint64_t{0} : uint64_t{format::kLockTryFailed},
      .stack_id = intern_site_(pid, record.site),
  };
  if (record.time - record.request > kContendedNs) row.flags |= format::kLockContended;
  Thread thread{pid, tid};
  if (auto early = early_waits_.find(thread); early != early_waits_.end()) {
    if (encloses(row, early->second)) {
      join(row, early->second);
      early_waits_.erase(early);
    } else if (early->second.time < row.time) {
      early_waits_.erase(early);  // its call's record was lost
    }
  }
  if (!acquired) {
    finished(row);
    return;
  }
  SectionKey key{pid, tid, record.address};
  if (auto it = open_.find(key); it != open_.end()) {
    // Re-acquired while held (recursive mutex, nested read lock): folded
    // into the outer section, whose row says so.
    ++it->second.depth;
    it->second.row.flags |= format::kLockRecursive;
    return;
  }
  if (open_.size() >= kMaxOpenSections) {
    emit_(row);
    return;
  }
  open_.emplace(key, OpenSection{.row = row});
}

void PreloadSections::onRelease(uint32_t pid, uint32_t tid, const Record& record) {
  auto it = open_.find({pid, tid, record.address});
  if (it == open_.end()) return;  // acquired before recording started, or its record was lost
  if (it->second.depth > 1) {
    --it->second.depth;
    return;
  }
  LockInterval row = it->second.row;
  open_.erase(it);
  row.release_time = record.time;
  finished(row);
}

void PreloadSections::finished(const LockInterval& row) {
  bool joined = row.releaser_tid != 0 || row.holder_tid != 0;
  if (joined || row.acquired_time - row.time < kMayHaveWaitedNs) {
    emit_(row);
    return;
  }
  held_[{static_cast<uint32_t>(row.pid), static_cast<uint32_t>(row.tid)}].push_back(row);
}

bool PreloadSections::encloses(const LockInterval& call, const LockInterval& wait) {
  return call.pid == wait.pid && call.tid == wait.tid && call.time <= wait.time &&
         wait.time <= call.acquired_time;
}

void PreloadSections::join(LockInterval& call, const LockInterval& wait) {
  call.flags |= format::kLockContended | (wait.flags & format::kLockHolderChecked);
  if (call.holder_tid == 0) {
    call.holder_tid = wait.holder_tid;
    call.holder_state = wait.holder_state;
  }
  call.releaser_tid = wait.releaser_tid;
  call.releaser_stack_id = wait.releaser_stack_id;
  if (wait.stack_id != 0) call.stack_id = wait.stack_id;
}

bool PreloadSections::claimWait(const LockInterval& wait, uint64_t call_request) {
  Thread thread{static_cast<uint32_t>(wait.pid), static_cast<uint32_t>(wait.tid)};
  for (auto it = open_.lower_bound({thread.first, thread.second, 0});
       it != open_.end() && std::get<0>(it->first) == thread.first &&
       std::get<1>(it->first) == thread.second;
       ++it) {
    if (encloses(it->second.row, wait)) {
      join(it->second.row, wait);
      return true;
    }
  }
  if (auto held = held_.find(thread); held != held_.end()) {
    for (auto it = held->second.begin(); it != held->second.end(); ++it) {
      if (!encloses(*it, wait)) continue;
      join(*it, wait);
      emit_(*it);
      held->second.erase(it);
      return true;
    }
  }
  if (call_request != 0 && call_request <= wait.time) {
    early_waits_[thread] = wait;
    return true;
  }
  return false;
}

void PreloadSections::flush(uint64_t now) {
  for (auto it = held_.begin(); it != held_.end();) {
    std::deque<LockInterval>& rows = it->second;
    while (!rows.empty() && rows.front().acquired_time + kJoinWindowNs < now) {
      emit_(rows.front());
      rows.pop_front();
    }
    it = rows.empty() ? held_.erase(it) : std::next(it);
  }
}

void PreloadSections::finish() {
  for (auto& [thread, rows] : held_)
    for (const LockInterval& row : rows) emit_(row);
  held_.clear();
  for (auto& [key, section] : open_) emit_(section.row);
  open_.clear();
  // A wait whose call never returned (the recording stopped inside it) is a wait row.
  for (auto& [thread, wait] : early_waits_) emit_(wait);
  early_waits_.clear();
}

}  // namespace incise::recorder
