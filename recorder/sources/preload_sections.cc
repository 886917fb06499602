#include "recorder/sources/preload_sections.h"

#include <algorithm>
#include <vector>

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
  Section section{.row = LockInterval{
                      .time = record.request,
                      .acquired_time = record.time,
                      .release_time = acquired ? 0 : record.time,
                      .pid = pid,
                      .tid = tid,
                      .address = record.address,
                      .lock_kind = record.kind,
                      .flags = acquired ? uint64_t{0} : uint64_t{format::kLockTryFailed},
                      .stack_id = intern_site_(pid, record.site),
                  }};
  LockInterval& row = section.row;
  if (record.time - record.request > kContendedNs) row.flags |= format::kLockContended;
  if (auto early = early_waits_.empty() ? early_waits_.end() : early_waits_.find({pid, tid});
      early != early_waits_.end()) {
    // Waits before this call's request belonged to a call whose record was lost.
    for (const LockInterval& wait : early->second)
      if (encloses(row, wait)) join(section, wait);
    early_waits_.erase(early);
  }
  if (!acquired) {
    finished(section);
    return;
  }
  std::vector<Section>& open = openOf({pid, tid});
  for (Section& held : open) {
    if (held.row.address != record.address) continue;
    // Re-acquired while held (recursive mutex, nested read lock): folded
    // into the outer section, whose row says so.
    ++held.depth;
    held.row.flags |= format::kLockRecursive;
    return;
  }
  if (open_count_ >= kMaxOpenSections) {
    emit_(row);
    return;
  }
  open.push_back(section);
  ++open_count_;
}

std::vector<PreloadSections::Section>& PreloadSections::openOf(Thread thread) {
  if (last_open_ == nullptr || last_thread_ != thread) {
    last_thread_ = thread;
    last_open_ = &open_[thread];
  }
  return *last_open_;
}

void PreloadSections::onRelease(uint32_t pid, uint32_t tid, const Record& record) {
  std::vector<Section>& open = openOf({pid, tid});
  auto it = std::find_if(open.begin(), open.end(), [&](const Section& section) {
    return section.row.address == record.address;
  });
  if (it == open.end()) return;  // acquired before recording started, or its record was lost
  if (it->depth > 1) {
    --it->depth;
    return;
  }
  Section section = *it;
  open.erase(it);
  --open_count_;
  section.row.release_time = record.time;
  finished(section);
}

void PreloadSections::finished(const Section& section) {
  const LockInterval& row = section.row;
  if (row.acquired_time - row.time < kMayHaveWaitedNs) {
    emit_(row);
    return;
  }
  held_[{static_cast<uint32_t>(row.pid), static_cast<uint32_t>(row.tid)}].push_back(section);
}

bool PreloadSections::encloses(const LockInterval& call, const LockInterval& wait) {
  return call.pid == wait.pid && call.tid == wait.tid && call.time <= wait.time &&
         wait.time <= call.acquired_time;
}

void PreloadSections::join(Section& call, const LockInterval& wait) {
  LockInterval& row = call.row;
  row.flags |= format::kLockContended;
  if (!call.joined) {
    row.holder_tid = wait.holder_tid;
    row.holder_state = wait.holder_state;
    row.flags |= wait.flags & format::kLockHolderChecked;
    if (wait.stack_id != 0) row.stack_id = wait.stack_id;
    call.joined = true;
  }
  if (wait.releaser_tid != 0) {
    row.releaser_tid = wait.releaser_tid;
    row.releaser_stack_id = wait.releaser_stack_id;
  }
}

bool PreloadSections::claimWait(const LockInterval& wait, uint64_t call_request) {
  Thread thread{static_cast<uint32_t>(wait.pid), static_cast<uint32_t>(wait.tid)};
  latest_wait_end_ = std::max<uint64_t>(latest_wait_end_, wait.acquired_time);
  for (Section& section : openOf(thread)) {
    if (encloses(section.row, wait)) {
      join(section, wait);
      return true;
    }
  }
  if (auto held = held_.find(thread); held != held_.end()) {
    for (Section& section : held->second) {
      if (!encloses(section.row, wait)) continue;
      join(section, wait);
      return true;
    }
  }
  if (call_request != 0 && call_request <= wait.time) {
    std::vector<LockInterval>& early = early_waits_[thread];
    if (early.size() < kMaxEarlyWaits) early.push_back(wait);
    return true;
  }
  return false;
}

void PreloadSections::flush(uint64_t now) {
  for (auto it = held_.begin(); it != held_.end();) {
    std::deque<Section>& sections = it->second;
    while (!sections.empty()) {
      const LockInterval& row = sections.front().row;
      if (row.acquired_time + kJoinWindowNs >= latest_wait_end_ &&
          row.acquired_time + kMaxHoldNs >= now)
        break;
      emit_(row);
      sections.pop_front();
    }
    it = sections.empty() ? held_.erase(it) : std::next(it);
  }
}

void PreloadSections::finish() {
  for (auto& [thread, sections] : held_)
    for (const Section& section : sections) emit_(section.row);
  held_.clear();
  for (auto& [thread, sections] : open_)
    for (const Section& section : sections) emit_(section.row);
  open_.clear();
  open_count_ = 0;
  last_open_ = nullptr;
  // A wait whose call never returned (the recording stopped inside it) is a wait row.
  for (auto& [thread, waits] : early_waits_)
    for (const LockInterval& wait : waits) emit_(wait);
  early_waits_.clear();
}

}  // namespace incise::recorder
