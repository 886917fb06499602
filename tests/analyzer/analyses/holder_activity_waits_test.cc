// LockWaitIndex against the plain answer (a scan of every wait) on random
// waits, late arrivals and prunes; and the work it does, which must grow
// with the waits, not with waits x questions.
#include "analyzer/analyses/locks/holder_activity_waits.h"
#include "tests/analyzer/analyses/work_growth.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace incise::analyzer {
namespace {

using Wait = LockWaitIndex::Wait;

uint64_t scanWaited(const std::vector<Wait>& waits, uint64_t a, uint64_t b, uint64_t holder) {
  uint64_t total = 0;
  for (const Wait& w : waits) {
    uint64_t start = std::max(a, w.start), end = std::min(b, w.end);
    if (w.tid != holder && end > start) total += end - start;
  }
  return total;
}

std::set<uint64_t> scanWaiters(const std::vector<Wait>& waits, uint64_t a, uint64_t b,
                               uint64_t since, uint64_t holder) {
  std::set<uint64_t> tids;
  for (const Wait& w : waits) {
    uint64_t start = std::max(a, w.start), end = std::min(b, w.end);
    if (w.tid != holder && w.start >= since && end > start) tids.insert(w.tid);
  }
  return tids;
}

std::set<uint64_t> indexWaiters(LockWaitIndex& index, uint64_t a, uint64_t b, uint64_t since,
                                uint64_t holder) {
  std::set<uint64_t> tids;
  index.forEachWaiter(a, b, since, holder, [&](uint64_t tid) { tids.insert(tid); });
  return tids;
}

TEST(LockWaitIndex, KnownAnswers) {
  LockWaitIndex index;
  index.add({.start = 1500, .end = 5000, .tid = 2});
  index.add({.start = 3200, .end = 5500, .tid = 3});
  index.add({.start = 4000, .end = 4000, .tid = 4});  // zero length: overlaps nothing
  EXPECT_EQ(index.waitedDuring(1000, 5000, 1), 3500u + 1800u);
  EXPECT_EQ(index.waitedDuring(1000, 5000, 2), 1800u);  // its own wait does not count
  EXPECT_EQ(index.waitedDuring(2000, 3000, 1), 1000u);
  EXPECT_EQ(index.waitedDuring(5500, 9000, 1), 0u);
  EXPECT_EQ(indexWaiters(index, 2000, 3000, 0, 1), (std::set<uint64_t>{2}));
  EXPECT_EQ(indexWaiters(index, 3000, 5600, 0, 1), (std::set<uint64_t>{2, 3}));
  EXPECT_EQ(indexWaiters(index, 3000, 5600, 2000, 1), (std::set<uint64_t>{3}));
  EXPECT_EQ(indexWaiters(index, 3000, 5600, 0, 3), (std::set<uint64_t>{2}));
  EXPECT_EQ(indexWaiters(index, 5000, 5100, 0, 1), (std::set<uint64_t>{3}));  // [1500, 5000) ended
}

// Random waits, each thread's one after another (as threads wait), asked
// about random spans after every add, pruned now and then at a bound that
// only moves forward and that no later question goes below; pruned often,
// the index keeps few waits and scans them, rarely it keeps hundreds and
// answers from its integrals and tree.
TEST(LockWaitIndex, AgreesWithAScanOfEveryWait) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    const uint64_t prune_every = seed % 2 == 0 ? 50 : 1000;
    std::mt19937_64 rng(seed);
    LockWaitIndex index;
    std::vector<Wait> all;
    std::vector<uint64_t> free_at(6, 0);  // per thread: when its last wait ended
    uint64_t now = 0, bound = 0, indexed = 0;
    for (int i = 0; i < 1500; ++i) {
      now += rng() % 50;
      uint64_t tid = rng() % free_at.size();
      if (free_at[tid] <= now) {  // waits start in order, at `now`
        Wait w{.start = now, .end = now + rng() % 400, .tid = tid + 1};
        free_at[tid] = w.end;
        index.add(w);
        all.push_back(w);
      }
      // Questions about times up to `now` (every wait starting before it has come).
      for (int q = 0; q < 3; ++q) {
        uint64_t a = bound + rng() % (now - bound + 1);
        uint64_t b = std::min(now, a + rng() % 600);
        uint64_t holder = rng() % (free_at.size() + 1);
        uint64_t since = rng() % 2 ? 0 : a - rng() % (a - bound + 1);
        ASSERT_EQ(index.waitedDuring(a, b, holder), scanWaited(all, a, b, holder))
            << "seed " << seed << " at " << i << " [" << a << ", " << b << ")";
        ASSERT_EQ(indexWaiters(index, a, b, since, holder), scanWaiters(all, a, b, since, holder))
            << "seed " << seed << " at " << i;
      }
      indexed += index.indexed() ? 1 : 0;
      if (rng() % prune_every == 0) {
        bound = std::max(bound, now > 300 ? now - 300 : 0);
        index.prune(bound);
      }
    }
    EXPECT_GT(indexed, 0u) << "seed " << seed << ": never answered from the index";
    EXPECT_LT(indexed, 1500u) << "seed " << seed << ": never scanned";
  }
}

// Overlapping waits of one thread (only damaged rows make them) each count.
// A wait that starts before a time already asked about (rows out of order:
// a chunk header that lies) counts from that time on, not before.
TEST(LockWaitIndex, OverlappingAndLateWaits) {
  LockWaitIndex index;
  index.add({.start = 0, .end = 100, .tid = 2});
  index.add({.start = 50, .end = 150, .tid = 2});
  EXPECT_EQ(index.waitedDuring(0, 200, 1), 200u);
  EXPECT_EQ(index.waitedDuring(0, 200, 2), 0u);
  index.add({.start = 10, .end = 180, .tid = 3});  // late: counts from 200, so not at all
  EXPECT_EQ(index.waitedDuring(0, 200, 1), 200u);
  index.add({.start = 20, .end = 260, .tid = 4});  // late: counts over [200, 260)
  EXPECT_EQ(index.waitedDuring(0, 300, 1), 260u);
  std::set<uint64_t> waiters = indexWaiters(index, 0, 300, 0, 1);
  EXPECT_EQ(waiters, (std::set<uint64_t>{2, 4}));
}

// One hot lock: each of n waits is followed by a question about a span
// over the waits so far. A scan would read ~n^2/2 waits; the index reads
// O(n log n), so doubling n does not quadruple the work.
uint64_t workFor(size_t n) {
  uint64_t work = 0;
  LockWaitIndex index(&work);
  for (size_t i = 0; i < n; ++i) {
    uint64_t start = 10 * i;
    index.add({.start = start, .end = start + 25, .tid = 1 + i % 8});
    index.waitedDuring(0, start, 99);
    index.forEachWaiter(start > 30 ? start - 30 : 0, start, start > 60 ? start - 60 : 0, 99,
                        [](uint64_t) {});
  }
  return work;
}

TEST(LockWaitIndex, WorkGrowsWithTheWaitsNotWithTheirSquare) {
  // n log n: 4x the waits take ~4.7x the work; a scan would take 16x.
  expectWorkGrowth("work", workFor, 4000, 4, 6, 4000 * 100);
}

}  // namespace
}  // namespace incise::analyzer
