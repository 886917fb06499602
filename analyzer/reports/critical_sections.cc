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

}  // namespace

void LockRowStream::add(const format::LockInterval& row) {
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
                 .releaser_tid = row.releaser_tid});
  }
  if (contended_only) {
    futex_waits_.push_back({.lock = lock,
                            .start = row.time,
                            .end = row.acquired_time,
                            .stack_id = row.stack_id,
                            .tid = static_cast<uint32_t>(row.tid),
                            .releaser_tid = static_cast<uint32_t>(row.releaser_tid),
                            .kind = static_cast<uint8_t>(row.lock_kind)});
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

LockRowCounts LockRowStream::finish() {
  inferHolderSections();
  futex_waits_ = {};
  counts_.mode = saw_all_ && saw_contended_ ? LockRecordingMode::kMixed
                 : saw_all_                 ? LockRecordingMode::kAll
                 : saw_contended_           ? LockRecordingMode::kContended
                                            : LockRecordingMode::kNone;
  return counts_;
}

// Contended mode: each wake tells that the releaser held the lock until the
// wake. Walk every lock's waits in wake order, remembering each thread's last
// recorded acquisition and the lock's last release.
void LockRowStream::inferHolderSections() {
  std::vector<FutexWait>& waits = futex_waits_;
  std::sort(waits.begin(), waits.end(), [](const FutexWait& a, const FutexWait& b) {
    return std::tie(a.lock, a.end, a.tid) < std::tie(b.lock, b.end, b.tid);
  });
  std::set<std::tuple<uint64_t, uint64_t>> emitted;  // (releaser, wake) of the current lock
  std::map<uint64_t, LastAcquire> acquired_by;       // tid -> last recorded acquisition
  uint64_t last_release = 0;
  for (size_t i = 0; i < waits.size(); ++i) {
    const FutexWait& wait = waits[i];
    if (i == 0 || waits[i - 1].lock != wait.lock) {
      emitted.clear();
      acquired_by.clear();
      last_release = 0;
    } else if (waits[i - 1].end != wait.end) {
      last_release = waits[i - 1].end;
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
        ++counts_.inferred_sections;
        if (sinks_.section) sinks_.section(section);
      }
    }
    acquired_by[wait.tid] = {wait.end, wait.start, wait.stack_id};
  }
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
