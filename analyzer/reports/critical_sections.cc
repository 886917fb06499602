#include "analyzer/reports/critical_sections.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace incise::analyzer {
namespace {

bool has(uint64_t flags, format::LockFlags flag) {
  return (flags & flag) != 0;
}

struct LastAcquire {
  uint64_t time = 0;
  uint64_t request = 0;
  uint64_t stack_id = 0;
};

// Contended mode: each wake tells that the releaser held the lock until the
// wake. Walk every lock's waits in wake order, remembering each thread's last
// recorded acquisition and the lock's last release.
void inferHolderSections(std::vector<const LockWait*> futex_waits, LockTimeline& timeline) {
  std::sort(futex_waits.begin(), futex_waits.end(), [](const LockWait* a, const LockWait* b) {
    return std::tie(a->lock, a->end, a->tid) < std::tie(b->lock, b->end, b->tid);
  });
  std::set<std::tuple<uint64_t, uint64_t>> emitted;  // (releaser, wake) of the current lock
  std::map<uint64_t, LastAcquire> acquired_by;       // tid -> last recorded acquisition
  uint64_t last_release = 0;
  for (size_t i = 0; i < futex_waits.size(); ++i) {
    const LockWait& wait = *futex_waits[i];
    if (i == 0 || futex_waits[i - 1]->lock != wait.lock) {
      emitted.clear();
      acquired_by.clear();
      last_release = 0;
    } else if (futex_waits[i - 1]->end != wait.end) {
      last_release = futex_waits[i - 1]->end;
    }
    uint64_t releaser = wait.releaser_tid;
    if (releaser != 0 && releaser != wait.tid && emitted.emplace(releaser, wait.end).second) {
      CriticalSection section{.lock = wait.lock, .tid = releaser, .kind = wait.kind};
      section.end = wait.end;
      section.inferred = true;
      auto previous = acquired_by.find(releaser);
      if (previous != acquired_by.end() && previous->second.time >= last_release) {
        section.start = previous->second.time;
        section.request = previous->second.request;
        section.stack_id = previous->second.stack_id;
        section.contended = true;
      } else {
        section.start = std::max(wait.start, last_release);
        section.request = section.start;
      }
      if (section.start <= section.end) {
        timeline.sections.push_back(section);
        ++timeline.inferred_sections;
      }
    }
    acquired_by[wait.tid] = {wait.end, wait.start, wait.stack_id};
  }
}

}  // namespace

LockTimeline buildLockTimeline(std::span<const format::LockInterval> rows) {
  LockTimeline timeline;
  bool saw_all = false;
  bool saw_contended = false;
  std::vector<size_t> futex_wait_indexes;
  for (const format::LockInterval& row : rows) {
    bool released = row.release_time != 0;
    if (row.acquired_time < row.time || (released && row.release_time < row.acquired_time)) {
      ++timeline.malformed;
      continue;
    }
    if (has(row.flags, format::kLockTryFailed)) {
      ++timeline.try_failed;
      continue;
    }
    LockId lock{row.pid, row.address};
    bool contended_only = has(row.flags, format::kLockContendedOnly);
    bool contended = contended_only || has(row.flags, format::kLockContended);
    (contended_only ? saw_contended : saw_all) = true;
    timeline.acquisitions.push_back({.lock = lock,
                                     .tid = row.tid,
                                     .kind = row.lock_kind,
                                     .stack_id = row.stack_id,
                                     .time = row.time,
                                     .wait_ns = row.acquired_time - row.time,
                                     .contended = contended});
    if (contended) {
      if (contended_only) futex_wait_indexes.push_back(timeline.waits.size());
      timeline.waits.push_back({.lock = lock,
                                .tid = row.tid,
                                .kind = row.lock_kind,
                                .stack_id = row.stack_id,
                                .start = row.time,
                                .end = row.acquired_time,
                                .releaser_tid = row.releaser_tid});
    }
    if (contended_only) continue;
    if (has(row.flags, format::kLockRecursive)) {
      ++timeline.recursive;
      continue;
    }
    if (!released) {
      ++timeline.unreleased;
      continue;
    }
    timeline.sections.push_back({.lock = lock,
                                 .tid = row.tid,
                                 .kind = row.lock_kind,
                                 .stack_id = row.stack_id,
                                 .request = row.time,
                                 .start = row.acquired_time,
                                 .end = row.release_time,
                                 .contended = contended});
  }
  std::vector<const LockWait*> futex_waits;
  futex_waits.reserve(futex_wait_indexes.size());
  for (size_t i : futex_wait_indexes) futex_waits.push_back(&timeline.waits[i]);
  inferHolderSections(std::move(futex_waits), timeline);

  std::sort(timeline.sections.begin(), timeline.sections.end(),
            [](const CriticalSection& a, const CriticalSection& b) {
              return std::tie(a.tid, a.start, a.end, a.lock) <
                     std::tie(b.tid, b.start, b.end, b.lock);
            });
  std::sort(timeline.waits.begin(), timeline.waits.end(), [](const LockWait& a, const LockWait& b) {
    return std::tie(a.lock, a.start, a.end, a.tid) < std::tie(b.lock, b.start, b.end, b.tid);
  });
  timeline.mode = saw_all && saw_contended ? LockRecordingMode::kMixed
                  : saw_all                ? LockRecordingMode::kAll
                  : saw_contended          ? LockRecordingMode::kContended
                                           : LockRecordingMode::kNone;
  return timeline;
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
