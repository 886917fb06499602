// The lock story as a small trace with known answers, shared by the
// `incise locks` and `incise correlate` report tests.
//
// Thread "holder" (201) takes lock 0x5000 at update_account over
// [1000, 5000) ns: preempted over [2000, 3000), blocked over [3500, 4000),
// two page faults inside (at 1000 and 2500, under memset) and two outside.
// "waiter-1" (202) waits [1500, 5000) and holds [5000, 5500); "waiter-2"
// (203) waits [3200, 5500) and holds [5500, 5600). Each release wakes the
// next waiter from pthread_mutex_unlock <- update_account.
//
// contended = true records the same story as contended mode would: only
// the two futex waits, with their releasers.
//
//   TraceBuilder builder;
//   buildLockStory(builder, /*contended=*/false);
//   auto path = builder.write();
#pragma once

#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer::testing {

inline constexpr uint64_t kStoryLock = 0x5000;
inline constexpr uint32_t kStoryHolder = 201;
inline constexpr uint32_t kStoryWaiter1 = 202;
inline constexpr uint32_t kStoryWaiter2 = 203;

inline void buildLockStory(TraceBuilder& b, bool contended) {
  b.process(TraceBuilder::kPid, "bank");
  b.thread(kStoryHolder, "holder");
  b.thread(kStoryWaiter1, "waiter-1");
  b.thread(kStoryWaiter2, "waiter-2");
  b.function("pthread_mutex_lock", "libc.so.6");
  b.function("pthread_mutex_unlock", "libc.so.6");
  uint64_t acquire = b.stack({"pthread_mutex_lock", "update_account", "worker_main"});
  uint64_t release = b.stack({"pthread_mutex_unlock", "update_account", "worker_main"});
  uint64_t zeroing = b.stack({"memset", "update_account", "worker_main"});
  uint64_t parsing = b.stack({"parse", "worker_main"});
  uint64_t updating = b.stack({"update_account", "worker_main"});

  if (contended) {
    b.lock(kStoryWaiter1, kStoryLock, 1500, 5000, 0, acquire, format::kLockContendedOnly,
           kStoryHolder, format::LockKind::kFutex);
    b.lock(kStoryWaiter2, kStoryLock, 3200, 5500, 0, acquire, format::kLockContendedOnly,
           kStoryWaiter1, format::LockKind::kFutex);
  } else {
    b.lock(kStoryHolder, kStoryLock, 1000, 1000, 5000, acquire);
    b.lock(kStoryWaiter1, kStoryLock, 1500, 5000, 5500, acquire, format::kLockContended);
    b.lock(kStoryWaiter2, kStoryLock, 3200, 5500, 5600, acquire, format::kLockContended);
  }
  b.sched(2000, 0, kStoryHolder, 0, 0);
  b.sched(3000, 0, 0, 0, kStoryHolder);
  b.sched(3500, 0, kStoryHolder, 1, 0);
  b.sched(4000, 0, 0, 0, kStoryHolder);
  b.wakeup(4990, kStoryHolder, kStoryWaiter1, 1, release);
  b.wakeup(5490, kStoryWaiter1, kStoryWaiter2, 1, release);
  b.fault(500, kStoryHolder, 0x7000, parsing);
  b.fault(1000, kStoryHolder, 0x7100, zeroing);
  b.fault(2500, kStoryHolder, 0x7200, zeroing);
  b.fault(5000, kStoryHolder, 0x7300, parsing);
  b.sample(1200, kStoryHolder, updating);
  b.sample(4500, kStoryHolder, updating);
  b.sample(7000, kStoryHolder, parsing);
  b.setEnd(10000);
}

}  // namespace incise::analyzer::testing
