// Known answers for wake-up chains: who woke the longest waiters, from
// where, and what held up the waker.
#include <gtest/gtest.h>

#include <vector>

#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/wake_chains.h"
#include "tests/analyzer/analyses/work_growth.h"

namespace incise::analyzer {
namespace {

using format::LockInterval;
using format::Wakeup;

constexpr uint64_t kPid = 100;

LockInterval futexWait(uint64_t tid, uint64_t address, uint64_t start, uint64_t end,
                       uint64_t releaser) {
  return {.time = start,
          .acquired_time = end,
          .pid = kPid,
          .tid = tid,
          .address = address,
          .lock_kind = static_cast<uint64_t>(format::LockKind::kFutex),
          .flags = format::kLockContendedOnly,
          .releaser_tid = releaser};
}

Wakeup wake(uint64_t time, uint64_t waker, uint64_t wakee, uint64_t stack) {
  return {.time = time,
          .waker_pid = kPid,
          .waker_tid = waker,
          .wakee_pid = kPid,
          .wakee_tid = wakee,
          .stack_id = stack};
}

TEST(WakeChains, LongestWaitsFirstWithTheirWakers) {
  std::vector<LockInterval> locks = {
      futexWait(1, 0xa, 0, 1000, 2),   // longest: woken by 2
      futexWait(2, 0xb, 100, 800, 3),  // 2 was itself waiting for 3 meanwhile
      futexWait(2, 0xb, 850, 860, 3),  // shorter, and also inside: not the one followed
      futexWait(4, 0xc, 0, 10, 0),     // short, no information
  };
  std::vector<Wakeup> wakeups = {
      wake(50, 9, 1, 70),    // an earlier wake-up inside the wait (a spurious one)
      wake(990, 2, 1, 77),   // the one that ended it
      wake(1500, 8, 1, 78),  // after the wait
      wake(900, 7, 5, 79),   // another thread's
  };
  LockTimeline t = buildLockTimeline(locks);
  std::vector<WakeChain> chains = wakeChains(t, wakeups, 2, 4);
  ASSERT_EQ(chains.size(), 2u);

  const std::vector<WakeLink>& first = chains[0].links;
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].wait.tid, 1u);
  EXPECT_EQ(first[0].wait.duration(), 1000u);
  EXPECT_EQ(first[0].source, WakeSource::kWakeupEvent);
  EXPECT_EQ(first[0].waker_tid, 2u);
  EXPECT_EQ(first[0].waker_stack_id, 77u);
  EXPECT_EQ(first[0].wake_time, 990u);
  EXPECT_EQ(first[1].wait.tid, 2u);
  EXPECT_EQ(first[1].wait.duration(), 700u);  // the longest of 2's waits inside [0, 990]
  EXPECT_EQ(first[1].source, WakeSource::kReleaser);
  EXPECT_EQ(first[1].waker_tid, 3u);
  EXPECT_EQ(first[1].waker_stack_id, 0u);
  EXPECT_EQ(first[1].wake_time, 800u);

  EXPECT_EQ(chains[1].links.front().wait.tid, 2u);
  EXPECT_EQ(chains[1].links.front().wait.start, 100u);
}

TEST(WakeChains, StopsWhenAThreadRepeatsOrAtTheDepth) {
  std::vector<LockInterval> locks = {
      futexWait(1, 0xa, 0, 1000, 2), futexWait(2, 0xa, 10, 900, 1),  // each woke the other: a cycle
  };
  LockTimeline t = buildLockTimeline(locks);
  std::vector<WakeChain> chains = wakeChains(t, {}, 1, 8);
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(chains[0].links.size(), 2u);  // 1 <- 2 <- 1 stops before repeating 1
  EXPECT_EQ(wakeChains(t, {}, 1, 1)[0].links.size(), 1u);
}

TEST(WakeChains, UnexplainedWaitsAndEmptyInput) {
  std::vector<LockInterval> locks = {futexWait(4, 0xc, 0, 10, 0)};
  LockTimeline t = buildLockTimeline(locks);
  std::vector<WakeChain> chains = wakeChains(t, {}, 5, 4);
  ASSERT_EQ(chains.size(), 1u);
  ASSERT_EQ(chains[0].links.size(), 1u);
  EXPECT_EQ(chains[0].links[0].source, WakeSource::kNone);
  EXPECT_TRUE(wakeChains(buildLockTimeline({}), {}, 5, 4).empty());
}

// A Go program's thread 7 runs goroutines that park on a mutex one after
// the other, `parked` of them waiting at any time (wait i is [10 i, 10 (i +
// parked) + i % 7), released by thread 8), while thread 7 itself takes a
// futex wait now and then and is woken every 10 ns. The wake-ups end only
// the thread's own waits; the goroutines' waits are explained by their
// releaser. What the chains read must not grow with the goroutines parked
// (a scan of every wait in progress per wake-up would: 64x here).
uint64_t chainWorkWithParkedGoroutines(uint64_t parked) {
  constexpr uint64_t kWaits = 20000;
  LongestWaitChains chains(3, 4);
  for (uint64_t i = 0; i < kWaits; ++i) {
    uint64_t t = 10 * i;
    chains.settle(t);
    chains.addWait({.lock = {kPid, 0xa},
                    .tid = 7,
                    .start = t,
                    .end = t + 10 * parked + i % 7,
                    .releaser_tid = 8,
                    .goid = 100 + i});
    if (i % 100 == 0)
      chains.addWait({.lock = {kPid, 0xb}, .tid = 7, .start = t, .end = t + 3, .releaser_tid = 9});
    chains.add(wake(t + 2, 9, 7, 55));
  }
  std::vector<WakeChain> longest = chains.finish();
  EXPECT_EQ(longest.size(), 3u);
  for (const WakeChain& chain : longest) {
    if (chain.links.empty()) {
      ADD_FAILURE() << "a chain without links";
      continue;
    }
    EXPECT_EQ(chain.links[0].wait.duration(), 10 * parked + 6);
    EXPECT_EQ(chain.links[0].source, WakeSource::kReleaser);
    EXPECT_EQ(chain.links[0].waker_tid, 8u);
  }
  return chains.work();
}

TEST(WakeChains, WakeUpsOfAThreadDoNotReadItsParkedGoroutines) {
  expectWorkGrowth("work", chainWorkWithParkedGoroutines, 16, 64, 2, 20000 * 4);
}

// The thread's own futex wait is still ended by its wake-up.
TEST(WakeChains, AThreadWaitAmongParkedGoroutinesIsEndedByItsWakeUp) {
  LongestWaitChains chains(1, 4);
  chains.addWait(
      {.lock = {kPid, 0xa}, .tid = 7, .start = 0, .end = 500, .releaser_tid = 8, .goid = 101});
  chains.addWait({.lock = {kPid, 0xb}, .tid = 7, .start = 10, .end = 900, .releaser_tid = 9});
  chains.add(wake(890, 3, 7, 55));
  std::vector<WakeChain> longest = chains.finish();
  ASSERT_EQ(longest.size(), 1u);
  ASSERT_FALSE(longest[0].links.empty());
  EXPECT_EQ(longest[0].links[0].wait.lock.address, 0xbu);
  EXPECT_EQ(longest[0].links[0].source, WakeSource::kWakeupEvent);
  EXPECT_EQ(longest[0].links[0].waker_tid, 3u);
  EXPECT_EQ(longest[0].links[0].waker_stack_id, 55u);
}

}  // namespace
}  // namespace incise::analyzer
