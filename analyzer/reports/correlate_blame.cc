#include "analyzer/reports/correlate_blame.h"

namespace incise::analyzer {

WaitBlame::WaitBlame(std::string_view recorded_lock_mode)
    : lock_calls_recorded_(recorded_lock_mode == "all") {}

bool WaitBlame::blamesHolder(const format::LockInterval& row) const {
  switch (static_cast<format::LockKind>(row.lock_kind)) {
    case format::LockKind::kMutex:
    case format::LockKind::kRwlockRead:
    case format::LockKind::kRwlockWrite:
    case format::LockKind::kSpin:
    case format::LockKind::kCustom:
      return true;
    case format::LockKind::kFutex:
      return !lock_calls_recorded_;
  }
  return false;  // a kind this reader does not know
}

std::string WaitBlame::othersDescription(uint64_t count) {
  return std::string(count == 1 ? "futex wait" : "futex waits") +
         " outside the recorded lock calls (pthread_join, condition variables and semaphores "
         "wait this way)";
}

void UnblamedWaits::add(const format::LockInterval& row) {
  uint64_t duration = row.acquired_time >= row.time ? row.acquired_time - row.time : 0;
  if (count == 0 || duration > longest.acquired_time - longest.time) longest = row;
  ++count;
  total_ns += duration;
}

}  // namespace incise::analyzer
