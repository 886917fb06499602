// Known answers for critical sections (both lock modes) and lock statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "analyzer/analyses/distributions/duration_distribution.h"
#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/lock_stats.h"

namespace incise::analyzer {
namespace {

using format::LockInterval;

constexpr uint64_t kLockA = 0x5000;
constexpr uint64_t kLockB = 0x6000;
constexpr uint64_t kPid = 100;

LockInterval exact(uint64_t tid, uint64_t address, uint64_t request, uint64_t acquired,
                   uint64_t release, uint64_t stack, uint64_t flags = 0) {
  return {.time = request,
          .acquired_time = acquired,
          .release_time = release,
          .pid = kPid,
          .tid = tid,
          .address = address,
          .lock_kind = static_cast<uint64_t>(format::LockKind::kMutex),
          .flags = flags,
          .stack_id = stack};
}

LockInterval futexWait(uint64_t tid, uint64_t address, uint64_t start, uint64_t end,
                       uint64_t releaser, uint64_t stack = 0) {
  return {.time = start,
          .acquired_time = end,
          .pid = kPid,
          .tid = tid,
          .address = address,
          .lock_kind = static_cast<uint64_t>(format::LockKind::kFutex),
          .flags = format::kLockContendedOnly,
          .stack_id = stack,
          .releaser_tid = releaser};
}

const CriticalSection* sectionOf(const LockTimeline& t, uint64_t tid, uint64_t end) {
  for (const CriticalSection& s : t.sections) {
    if (s.tid == tid && s.end == end) return &s;
  }
  return nullptr;
}

TEST(CriticalSections, AllModeSectionsAreExactAndWaitsAreTheContendedAcquires) {
  std::vector<LockInterval> rows = {
      exact(1, kLockA, 100, 100, 300, 7),
      exact(2, kLockA, 150, 300, 350, 8, format::kLockContended),
  };
  LockTimeline t = buildLockTimeline(rows);
  EXPECT_EQ(t.mode, LockRecordingMode::kAll);
  ASSERT_EQ(t.sections.size(), 2u);
  EXPECT_EQ(t.sections[0].tid, 1u);
  EXPECT_EQ(t.sections[0].start, 100u);
  EXPECT_EQ(t.sections[0].end, 300u);
  EXPECT_FALSE(t.sections[0].inferred);
  EXPECT_TRUE(t.sections[1].contended);
  EXPECT_EQ(t.sections[1].request, 150u);
  ASSERT_EQ(t.waits.size(), 1u);
  EXPECT_EQ(t.waits[0].tid, 2u);
  EXPECT_EQ(t.waits[0].duration(), 150u);
  ASSERT_EQ(t.acquisitions.size(), 2u);
  EXPECT_EQ(t.acquisitions[0].wait_ns, 0u);
  EXPECT_EQ(t.acquisitions[1].wait_ns, 150u);
  EXPECT_EQ(t.inferred_sections, 0u);
}

TEST(CriticalSections, CountsRowsThatMakeNoSection) {
  std::vector<LockInterval> rows = {
      exact(1, kLockA, 100, 100, 0, 7),                            // unreleased
      exact(1, kLockA, 110, 110, 120, 7, format::kLockRecursive),  // recursive
      exact(2, kLockA, 130, 130, 130, 7, format::kLockTryFailed),  // failed trylock
      exact(2, kLockA, 200, 150, 300, 7),                          // acquired before requested
      exact(2, kLockA, 200, 250, 240, 7),                          // released before acquired
  };
  LockTimeline t = buildLockTimeline(rows);
  EXPECT_EQ(t.unreleased, 1u);
  EXPECT_EQ(t.recursive, 1u);
  EXPECT_EQ(t.try_failed, 1u);
  EXPECT_EQ(t.malformed, 2u);
  EXPECT_TRUE(t.sections.empty());
  EXPECT_EQ(t.acquisitions.size(), 2u);  // the unreleased and the recursive one
}

TEST(CriticalSections, ContendedModeInfersTheReleasersSections) {
  std::vector<LockInterval> rows = {
      futexWait(2, kLockA, 100, 200, 1, 21),  // 1 held since (unknown) <= 100
      futexWait(3, kLockA, 150, 300, 2, 31),  // 2 took it at 200
      futexWait(1, kLockA, 250, 400, 3, 11),  // 3 took it at 300
      futexWait(2, kLockA, 500, 600, 1, 22),  // 1 took it at 400
      futexWait(3, kLockA, 700, 800, 4),      // 4 never waited: from max(700, 600)
      futexWait(3, kLockA, 900, 950, 2),      // 2 last acquired at 600 < last release 800
      futexWait(5, kLockA, 940, 950, 2),      // same wake as above: one section
      futexWait(6, kLockA, 960, 990, 0),      // releaser unknown: no section
  };
  LockTimeline t = buildLockTimeline(rows);
  EXPECT_EQ(t.mode, LockRecordingMode::kContended);
  EXPECT_EQ(t.waits.size(), 8u);
  EXPECT_EQ(t.inferred_sections, 6u);
  ASSERT_EQ(t.sections.size(), 6u);

  const CriticalSection* first = sectionOf(t, 1, 200);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->start, 100u);
  EXPECT_EQ(first->stack_id, 0u);
  EXPECT_TRUE(first->inferred);
  EXPECT_FALSE(first->contended);

  const CriticalSection* second = sectionOf(t, 2, 300);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->start, 200u);
  EXPECT_EQ(second->request, 100u);
  EXPECT_EQ(second->stack_id, 21u);
  EXPECT_TRUE(second->contended);

  EXPECT_EQ(sectionOf(t, 3, 400)->start, 300u);
  EXPECT_EQ(sectionOf(t, 1, 600)->start, 400u);
  EXPECT_EQ(sectionOf(t, 1, 600)->stack_id, 11u);
  EXPECT_EQ(sectionOf(t, 4, 800)->start, 700u);
  EXPECT_EQ(sectionOf(t, 2, 950)->start, 900u);
  EXPECT_EQ(sectionOf(t, 2, 950)->stack_id, 0u);
}

// The holder inference as a whole-trace walk: every lock's waits in wake
// order (the definition LockRowStream settles incrementally).
std::vector<CriticalSection> inferAtOnce(std::vector<LockInterval> waits) {
  std::stable_sort(waits.begin(), waits.end(), [](const LockInterval& a, const LockInterval& b) {
    return std::tie(a.address, a.acquired_time, a.tid) <
           std::tie(b.address, b.acquired_time, b.tid);
  });
  std::vector<CriticalSection> sections;
  std::map<uint64_t, const LockInterval*> acquired_by;
  std::set<uint64_t> releasers_at_wake;
  uint64_t last_release = 0;
  for (size_t i = 0; i < waits.size(); ++i) {
    const LockInterval& w = waits[i];
    if (i == 0 || waits[i - 1].address != w.address) {
      acquired_by.clear();
      releasers_at_wake.clear();
      last_release = 0;
    } else if (waits[i - 1].acquired_time != w.acquired_time) {
      last_release = waits[i - 1].acquired_time;
      releasers_at_wake.clear();
    }
    if (w.releaser_tid != 0 && w.releaser_tid != w.tid &&
        releasers_at_wake.insert(w.releaser_tid).second) {
      auto it = acquired_by.find(w.releaser_tid);
      bool recorded = it != acquired_by.end() && it->second->acquired_time >= last_release;
      uint64_t start = recorded ? it->second->acquired_time : std::max(w.time, last_release);
      sections.push_back({.lock = {kPid, w.address},
                          .tid = w.releaser_tid,
                          .stack_id = recorded ? it->second->stack_id : 0,
                          .start = start,
                          .end = w.acquired_time});
    }
    acquired_by[w.tid] = &w;
  }
  return sections;
}

std::vector<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, uint64_t>> keys(
    const std::vector<CriticalSection>& sections) {
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, uint64_t>> list;
  for (const CriticalSection& s : sections)
    list.emplace_back(s.lock.address, s.tid, s.start, s.end, s.stack_id);
  std::sort(list.begin(), list.end());
  return list;
}

// Waits woken out of start order, long waits spanning many others, shared
// wakes, on a few locks: settling as rows arrive gives the whole-trace answer.
TEST(LockRowStream, SettlingAsRowsArriveMatchesTheWholeTraceWalk) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::vector<LockInterval> rows;
    for (uint64_t i = 0; i < 400; ++i) {
      uint64_t start = rng() % 10000;
      uint64_t length = rng() % 8 == 0 ? rng() % 5000 : rng() % 50;
      uint64_t end = (start + length) / 10 * 10;  // shared wakes
      if (end < start) end = start;
      rows.push_back(
          futexWait(1 + rng() % 6, kLockA + (rng() % 3) * 64, start, end, rng() % 7, 100 + i));
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const LockInterval& a, const LockInterval& b) { return a.time < b.time; });
    std::vector<CriticalSection> streamed;
    size_t most_in_progress = 0;
    LockRowStream stream({.section = [&](const CriticalSection& s) { streamed.push_back(s); }});
    for (const LockInterval& row : rows) {
      stream.add(row);
      most_in_progress = std::max(most_in_progress, stream.waitsInProgress());
    }
    size_t before_finish = streamed.size();
    LockRowCounts counts = stream.finish();
    EXPECT_EQ(keys(streamed), keys(inferAtOnce(rows))) << "round " << round;
    EXPECT_EQ(counts.inferred_sections, streamed.size());
    EXPECT_LT(most_in_progress, rows.size());       // settled waits are not kept
    EXPECT_GT(before_finish, streamed.size() / 2);  // sections come as time passes
  }
}

TEST(LockRowStream, HandsSectionsOnOnceTheWakeIsSettled) {
  std::vector<CriticalSection> sections;
  LockRowStream stream({.section = [&](const CriticalSection& s) { sections.push_back(s); }});
  stream.add(futexWait(2, kLockA, 100, 200, 1, 21));
  stream.add(futexWait(3, kLockA, 150, 200, 1, 31));  // the same wake: one section of 1
  EXPECT_EQ(stream.pendingSectionStart(1), 100u);     // 1 is to end both waits
  EXPECT_EQ(stream.pendingSectionStart(LockId{kPid, kLockA}), 100u);
  stream.add(futexWait(4, kLockB, 200, 5000, 9));  // at 200: the wake at 200 may still come
  EXPECT_TRUE(sections.empty());
  stream.add(futexWait(4, kLockA, 201, 300, 3));
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].tid, 1u);
  EXPECT_EQ(sections[0].start, 100u);
  EXPECT_EQ(stream.waitsInProgress(), 2u);
  // 1 released; 2 and 3 acquired at 200, either may be the next releaser.
  EXPECT_EQ(stream.pendingSectionStart(1), UINT64_MAX);
  EXPECT_EQ(stream.pendingSectionStart(2), 200u);
  EXPECT_EQ(stream.pendingSectionStart(3), 200u);
  stream.add(futexWait(5, kLockB, 301, 400, 0));  // settles 300: 3 held [200, 300)
  ASSERT_EQ(sections.size(), 2u);
  EXPECT_EQ(sections[1].tid, 3u);
  EXPECT_EQ(sections[1].start, 200u);
  EXPECT_EQ(sections[1].stack_id, 31u);
  EXPECT_EQ(stream.pendingSectionStart(2), UINT64_MAX);  // its acquisition is past a release
  EXPECT_EQ(stream.pendingSectionStart(4), 300u);
  stream.finish();
  EXPECT_EQ(sections.size(), 3u);  // 9 held B until 5000
}

TEST(CriticalSections, MixedModesAreNamed) {
  std::vector<LockInterval> rows = {exact(1, kLockA, 1, 2, 3, 0), futexWait(2, kLockB, 4, 5, 0)};
  EXPECT_EQ(buildLockTimeline(rows).mode, LockRecordingMode::kMixed);
  EXPECT_EQ(buildLockTimeline({}).mode, LockRecordingMode::kNone);
  EXPECT_STREQ(lockModeName(LockRecordingMode::kContended), "contended");
}

Distribution distributionOf(const std::vector<uint64_t>& values) {
  DurationDistribution distribution;
  for (uint64_t v : values) distribution.add(v);
  return distribution.summary();
}

TEST(LockStats, NearestRankPercentiles) {
  std::vector<uint64_t> hundred;
  for (uint64_t v = 100; v >= 1; --v) hundred.push_back(v);
  Distribution d = distributionOf(hundred);
  EXPECT_EQ(d.count, 100u);
  EXPECT_EQ(d.total, 5050u);
  EXPECT_EQ(d.p50, 50u);
  EXPECT_EQ(d.p90, 90u);
  EXPECT_EQ(d.p99, 99u);
  EXPECT_EQ(d.max, 100u);

  std::vector<uint64_t> four = {4, 1, 3, 2};
  d = distributionOf(four);
  EXPECT_EQ(d.p50, 2u);
  EXPECT_EQ(d.p90, 4u);
  EXPECT_EQ(d.p99, 4u);

  std::vector<uint64_t> none;
  EXPECT_EQ(distributionOf(none).count, 0u);
}

TEST(LockStats, Log2Buckets) {
  EXPECT_EQ(log2Bucket(0), 0u);
  EXPECT_EQ(log2Bucket(1), 0u);
  EXPECT_EQ(log2Bucket(2), 1u);
  EXPECT_EQ(log2Bucket(3), 1u);
  EXPECT_EQ(log2Bucket(1023), 9u);
  EXPECT_EQ(log2Bucket(1024), 10u);
  EXPECT_EQ(log2Bucket(UINT64_MAX), 63u);
}

std::vector<LockInterval> twoLocks() {
  return {
      exact(1, kLockA, 0, 0, 100, 7),                                 // hold 100
      exact(2, kLockA, 50, 100, 300, 8, format::kLockContended),      // wait 50, hold 200
      exact(3, kLockA, 300, 300, 310, 7),                             // hold 10
      exact(1, kLockB, 1000, 1000, 1004, 9),                          // hold 4
      exact(2, kLockB, 1001, 1004, 1005, 9, format::kLockContended),  // wait 3, hold 1
  };
}

TEST(LockStats, PerLock) {
  std::vector<LockInterval> rows = twoLocks();
  LockTimeline t = buildLockTimeline(rows);
  std::vector<LockGroupStats> groups = computeLockStats(t, LockGrouping::kByLock, {}, 2);
  ASSERT_EQ(groups.size(), 2u);
  const LockGroupStats& a = groups[0];  // most wait first
  EXPECT_EQ(a.lock.address, kLockA);
  EXPECT_EQ(a.locks, 1u);
  EXPECT_EQ(a.site, 7u);  // two of three acquisitions
  EXPECT_EQ(a.site_stack_id, 7u);
  EXPECT_EQ(a.acquisitions, 3u);
  EXPECT_EQ(a.contended, 1u);
  EXPECT_EQ(a.wait.total, 50u);
  EXPECT_EQ(a.wait.max, 50u);
  EXPECT_EQ(a.wait.p50, 0u);
  EXPECT_EQ(a.hold.count, 3u);
  EXPECT_EQ(a.hold.total, 310u);
  EXPECT_EQ(a.hold.p50, 100u);
  EXPECT_EQ(a.hold.max, 200u);
  EXPECT_FALSE(a.hold_inferred);
  ASSERT_EQ(a.top_holders.size(), 2u);
  EXPECT_EQ(a.top_holders[0].tid, 2u);
  EXPECT_EQ(a.top_holders[0].ns, 200u);
  EXPECT_EQ(a.top_holders[1].tid, 1u);
  ASSERT_EQ(a.top_waiters.size(), 1u);  // threads that never waited are not waiters
  EXPECT_EQ(a.top_waiters[0].tid, 2u);
  EXPECT_EQ(a.top_waiters[0].count, 1u);
  EXPECT_EQ(a.hold_histogram[log2Bucket(100)], 1u);  // bucket 6
  EXPECT_EQ(a.hold_histogram[7], 1u);                // 200
  EXPECT_EQ(a.hold_histogram[3], 1u);                // 10
  EXPECT_EQ(groups[1].lock.address, kLockB);
  EXPECT_EQ(groups[1].wait.total, 3u);
  EXPECT_EQ(groups[1].hold.total, 5u);
}

TEST(LockStats, PerSiteMergesStacksOfOneSite) {
  std::vector<LockInterval> rows = twoLocks();
  LockTimeline t = buildLockTimeline(rows);
  // Stacks 7 and 8 are one site (say, update_account); 9 another.
  SiteOf site_of = [](uint64_t stack) -> uint64_t { return stack == 9 ? 2 : 1; };
  std::vector<LockGroupStats> groups = computeLockStats(t, LockGrouping::kBySite, site_of, 3);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].site, 1u);
  EXPECT_EQ(groups[0].acquisitions, 3u);
  EXPECT_EQ(groups[0].hold.total, 310u);
  EXPECT_EQ(groups[0].site_stack_id, 7u);
  EXPECT_EQ(groups[0].lock.address, kLockA);
  EXPECT_EQ(groups[1].site, 2u);
  EXPECT_EQ(groups[1].acquisitions, 2u);
}

TEST(LockStats, ContendedModeHoldsAreInferred) {
  std::vector<LockInterval> rows = {futexWait(2, kLockA, 100, 200, 1, 21),
                                    futexWait(3, kLockA, 150, 300, 2, 31)};
  LockTimeline t = buildLockTimeline(rows);
  std::vector<LockGroupStats> groups = computeLockStats(t, LockGrouping::kByLock, {}, 3);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].acquisitions, 2u);
  EXPECT_EQ(groups[0].contended, 2u);
  EXPECT_EQ(groups[0].wait.total, 250u);
  EXPECT_TRUE(groups[0].hold_inferred);
  EXPECT_EQ(groups[0].hold.count, 2u);
  EXPECT_EQ(groups[0].hold.total, 200u);  // [100,200) by 1 and [200,300) by 2
  EXPECT_EQ(groups[0].site, 21u);         // recorded acquisitions name it, first among equals
}

// What `incise locks` does: rows straight from a LockRowStream into a
// LockStatsBuilder, in any order (sections may come before acquisitions),
// give the timeline's answers.
TEST(LockStats, StreamingGivesTheTimelineAnswers) {
  std::vector<LockInterval> rows = twoLocks();
  rows.push_back(futexWait(2, kLockB, 2000, 2100, 1, 21));
  rows.push_back(futexWait(3, kLockB, 2050, 2200, 2, 31));
  std::reverse(rows.begin(), rows.end());
  LockStatsBuilder builder(LockGrouping::kByLock, {});
  std::vector<Acquisition> acquisitions;
  LockRowStream stream({.acquisition = [&](const Acquisition& a) { acquisitions.push_back(a); },
                        .section = [&](const CriticalSection& s) { builder.add(s); }});
  for (const LockInterval& row : rows) stream.add(row);
  LockRowCounts counts = stream.finish();
  for (const Acquisition& a : acquisitions) builder.add(a);  // after the sections
  std::vector<LockGroupStats> streamed = builder.finish(3);

  LockTimeline t = buildLockTimeline(rows);
  std::vector<LockGroupStats> expected = computeLockStats(t, LockGrouping::kByLock, {}, 3);
  EXPECT_EQ(counts.mode, LockRecordingMode::kMixed);
  EXPECT_EQ(counts.inferred_sections, t.inferred_sections);
  EXPECT_EQ(counts.inferred_sections, 2u);
  ASSERT_EQ(streamed.size(), expected.size());
  for (size_t i = 0; i < streamed.size(); ++i) {
    EXPECT_EQ(streamed[i].lock, expected[i].lock);
    EXPECT_EQ(streamed[i].site, expected[i].site);
    EXPECT_EQ(streamed[i].kind, expected[i].kind);
    EXPECT_EQ(streamed[i].acquisitions, expected[i].acquisitions);
    EXPECT_EQ(streamed[i].wait.p50, expected[i].wait.p50);
    EXPECT_EQ(streamed[i].wait.total, expected[i].wait.total);
    EXPECT_EQ(streamed[i].hold.p90, expected[i].hold.p90);
    EXPECT_EQ(streamed[i].hold.total, expected[i].hold.total);
    EXPECT_EQ(streamed[i].hold_inferred, expected[i].hold_inferred);
    ASSERT_EQ(streamed[i].top_holders.size(), expected[i].top_holders.size());
    EXPECT_EQ(streamed[i].top_holders[0].tid, expected[i].top_holders[0].tid);
  }
}

// A lock taken at many sites keeps a bounded set of candidate sites; the
// dominant one still names it.
TEST(LockStats, ManySitesStillNameTheDominantOne) {
  std::vector<LockInterval> rows;
  uint64_t time = 0;
  for (uint64_t i = 0; i < 400; ++i) {
    uint64_t stack = i % 4 == 0 ? 5 : 100 + i;  // site 5 in a quarter; 300 others once each
    rows.push_back(exact(1, kLockA, time, time, time + 1, stack));
    time += 10;
  }
  LockTimeline t = buildLockTimeline(rows);
  std::vector<LockGroupStats> groups = computeLockStats(t, LockGrouping::kByLock, {}, 3);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].site, 5u);
  EXPECT_EQ(groups[0].site_stack_id, 5u);
  EXPECT_EQ(groups[0].acquisitions, 400u);
}

}  // namespace
}  // namespace incise::analyzer
