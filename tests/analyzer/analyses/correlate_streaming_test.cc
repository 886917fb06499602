// incise correlate in one time-ordered pass: sections, waits, switches,
// samples and faults streamed (lock rows through a LockRowStream, the
// others held back only while a section may still cover them) give the
// whole-trace answers, and what is kept stays small.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/holder_activity.h"
#include "analyzer/analyses/locks/wake_chains.h"

namespace incise::analyzer {
namespace {

using format::CpuSample;
using format::LockInterval;
using format::PageFault;
using format::SchedSwitch;
using format::Wakeup;

constexpr uint64_t kPid = 100;
constexpr uint64_t kLock = 0x5000;

struct Rows {
  std::vector<LockInterval> locks;
  std::vector<SchedSwitch> switches;
  std::vector<CpuSample> samples;
  std::vector<PageFault> faults;
  std::vector<Wakeup> wakeups;
};

template <typename T>
void byTime(std::vector<T>& rows) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const T& a, const T& b) { return a.time < b.time; });
}

// What incise correlate does with a trace's rows: one pass, lock rows first
// among equal times, settling whenever time moves on.
struct Streamed {
  HolderActivity activity;
  HolderActivityBuilder::Footprint footprint;
  std::vector<WakeChain> chains;
  size_t most_waits_kept = 0;
};

Streamed stream(const Rows& rows, size_t chains, size_t depth) {
  HolderActivityBuilder holders({});
  LongestWaitChains longest(chains, depth);
  LockRowStream locks({.section = [&](const CriticalSection& s) { holders.addSection(s); },
                       .wait =
                           [&](const LockWait& w) {
                             holders.addWait(w);
                             longest.addWait(w);
                           }});
  Streamed result;
  size_t l = 0, sw = 0, sa = 0, fa = 0, wa = 0;
  uint64_t settled = 0;
  bool started = false;
  for (;;) {
    uint64_t now = UINT64_MAX;
    if (l < rows.locks.size()) now = std::min(now, rows.locks[l].time);
    if (sw < rows.switches.size()) now = std::min(now, rows.switches[sw].time);
    if (sa < rows.samples.size()) now = std::min(now, rows.samples[sa].time);
    if (fa < rows.faults.size()) now = std::min(now, rows.faults[fa].time);
    if (wa < rows.wakeups.size()) now = std::min(now, rows.wakeups[wa].time);
    if (now == UINT64_MAX) break;
    if (!started || now > settled) {
      locks.settleBefore(now);
      holders.settle(now, &locks);
      longest.settle(now);
      started = true;
      settled = now;
      result.most_waits_kept = std::max(result.most_waits_kept, longest.waitsKept());
    }
    if (l < rows.locks.size() && rows.locks[l].time == now) {
      locks.add(rows.locks[l++]);
    } else if (sw < rows.switches.size() && rows.switches[sw].time == now) {
      holders.add(rows.switches[sw++]);
    } else if (sa < rows.samples.size() && rows.samples[sa].time == now) {
      holders.add(rows.samples[sa++]);
    } else if (fa < rows.faults.size() && rows.faults[fa].time == now) {
      holders.add(rows.faults[fa++]);
    } else {
      longest.add(rows.wakeups[wa++]);
    }
  }
  locks.finish();
  result.activity = holders.finish();
  result.footprint = holders.footprint();
  result.chains = longest.finish();
  return result;
}

Rows randomRows(std::mt19937_64& rng, bool contended_mode) {
  Rows rows;
  const uint64_t span = 200000;
  for (uint64_t i = 0; i < 300; ++i) {
    uint64_t tid = 1 + rng() % 6;
    uint64_t address = kLock + (rng() % 3) * 64;
    uint64_t start = rng() % span;
    uint64_t wait = rng() % 3 == 0 ? rng() % 4000 : 0;
    if (contended_mode) {
      rows.locks.push_back({.time = start,
                            .acquired_time = start + 1 + wait,
                            .pid = kPid,
                            .tid = tid,
                            .address = address,
                            .lock_kind = static_cast<uint64_t>(format::LockKind::kFutex),
                            .flags = format::kLockContendedOnly,
                            .stack_id = 10 + rng() % 5,
                            .releaser_tid = rng() % 7});
    } else {
      rows.locks.push_back({.time = start,
                            .acquired_time = start + wait,
                            .release_time = start + wait + 1 + rng() % 3000,
                            .pid = kPid,
                            .tid = tid,
                            .address = address,
                            .lock_kind = static_cast<uint64_t>(format::LockKind::kMutex),
                            .flags = wait ? uint64_t{format::kLockContended} : 0,
                            .stack_id = 10 + rng() % 5,
                            .releaser_tid = wait ? 1 + rng() % 6 : 0});
    }
  }
  for (uint64_t i = 0; i < 3000; ++i) {
    uint64_t time = rng() % span;
    uint64_t tid = 1 + rng() % 7;  // 7 never holds a lock
    switch (rng() % 4) {
      case 0:
        rows.switches.push_back(
            {.time = time, .prev_pid = kPid, .prev_tid = tid, .prev_state = rng() % 2});
        break;
      case 1:
        rows.switches.push_back({.time = time, .next_pid = kPid, .next_tid = tid});
        break;
      case 2:
        rows.samples.push_back({.time = time, .pid = kPid, .tid = tid, .stack_id = 20 + rng() % 4});
        break;
      default:
        rows.faults.push_back({.time = time, .pid = kPid, .tid = tid, .stack_id = 30 + rng() % 4});
    }
    if (i % 3 == 0) {
      rows.wakeups.push_back({.time = rng() % span,
                              .waker_pid = kPid,
                              .waker_tid = 1 + rng() % 6,
                              .wakee_pid = kPid,
                              .wakee_tid = 1 + rng() % 6,
                              .stack_id = 40 + rng() % 4});
    }
  }
  byTime(rows.locks);
  byTime(rows.switches);
  byTime(rows.samples);
  byTime(rows.faults);
  byTime(rows.wakeups);
  return rows;
}

void expectSameHeld(const HeldLock& a, const HeldLock& b) {
  EXPECT_EQ(a.tid, b.tid);
  EXPECT_EQ(a.lock, b.lock);
  EXPECT_EQ(a.site, b.site);
  EXPECT_EQ(a.site_stack_id, b.site_stack_id);
  EXPECT_EQ(a.inferred, b.inferred);
  EXPECT_EQ(a.sections, b.sections);
  EXPECT_EQ(a.sections_switched_out, b.sections_switched_out);
  EXPECT_EQ(a.held_ns, b.held_ns);
  EXPECT_EQ(a.preempted_switches, b.preempted_switches);
  EXPECT_EQ(a.blocked_switches, b.blocked_switches);
  EXPECT_EQ(a.off_cpu_preempted_ns, b.off_cpu_preempted_ns);
  EXPECT_EQ(a.off_cpu_blocked_ns, b.off_cpu_blocked_ns);
  EXPECT_EQ(a.waiter_ns_while_off_cpu, b.waiter_ns_while_off_cpu);
  EXPECT_EQ(a.waiters_while_off_cpu, b.waiters_while_off_cpu);
  EXPECT_EQ(a.waiter_ns_while_held, b.waiter_ns_while_held);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.faults, b.faults);
  EXPECT_EQ(a.sample_stacks, b.sample_stacks);
  EXPECT_EQ(a.fault_stacks, b.fault_stacks);
}

// The longest waits and their chains by brute force over every wait.
std::vector<std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>> chainsAtOnce(
    const LockTimeline& t, const std::vector<Wakeup>& wakeups, size_t longest, size_t depth) {
  auto wakerOf = [&](const LockWait& w) -> std::pair<uint64_t, uint64_t> {  // (waker, time)
    std::pair<uint64_t, uint64_t> found{0, 0};
    bool seen = false;
    for (const Wakeup& k : wakeups) {
      if (k.wakee_tid == w.tid && k.time >= w.start && k.time <= w.end) {
        found = {k.waker_tid, k.time};
        seen = true;
      }
    }
    if (!seen && w.releaser_tid != 0) found = {w.releaser_tid, w.end};
    return found;
  };
  std::vector<size_t> order(t.waits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_tuple(t.waits[b].duration(), t.waits[a].start) <
           std::make_tuple(t.waits[a].duration(), t.waits[b].start);
  });
  std::vector<std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>> chains;
  for (size_t n = 0; n < std::min(longest, order.size()); ++n) {
    std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> links;
    std::set<uint64_t> seen;
    const LockWait* w = &t.waits[order[n]];
    while (w && links.size() < depth && seen.insert(w->tid).second) {
      auto [waker, time] = wakerOf(*w);
      links.emplace_back(w->tid, w->start, waker);
      if (waker == 0) break;
      const LockWait* next = nullptr;
      for (const LockWait& o : t.waits) {  // (lock, start) order: ties go to the first
        if (o.tid == waker && o.end >= w->start && o.end <= time &&
            (!next || o.duration() > next->duration() ||
             (o.duration() == next->duration() && o.end < next->end)))
          next = &o;
      }
      w = next;
    }
    chains.push_back(links);
  }
  return chains;
}

TEST(CorrelateStreaming, OnePassGivesTheWholeTraceAnswers) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 12; ++round) {
    bool contended_mode = round % 2 == 1;
    Rows rows = randomRows(rng, contended_mode);
    LockTimeline timeline = buildLockTimeline(rows.locks);
    HolderActivity expected =
        correlateHolders(timeline, rows.switches, rows.samples, rows.faults, {});
    Streamed streamed = stream(rows, 5, 4);
    ASSERT_EQ(streamed.activity.held.size(), expected.held.size()) << "round " << round;
    for (size_t i = 0; i < expected.held.size(); ++i)
      expectSameHeld(streamed.activity.held[i], expected.held[i]);
    ASSERT_EQ(streamed.activity.threads.size(), expected.threads.size());
    for (size_t i = 0; i < expected.threads.size(); ++i) {
      const ThreadActivity& a = streamed.activity.threads[i];
      const ThreadActivity& b = expected.threads[i];
      EXPECT_EQ(std::tie(a.tid, a.pid, a.samples, a.faults, a.samples_in_sections,
                         a.faults_in_sections, a.held_ns),
                std::tie(b.tid, b.pid, b.samples, b.faults, b.samples_in_sections,
                         b.faults_in_sections, b.held_ns));
    }
    // Nothing is left behind, and not every row was held at once.
    EXPECT_EQ(streamed.footprint.rows_held_back, 0u);
    EXPECT_LT(streamed.footprint.most_rows_held_back,
              rows.samples.size() + rows.faults.size() + 2 * rows.switches.size());

    auto brute = chainsAtOnce(timeline, rows.wakeups, 5, 4);
    ASSERT_EQ(streamed.chains.size(), brute.size());
    for (size_t n = 0; n < brute.size(); ++n) {
      ASSERT_EQ(streamed.chains[n].links.size(), brute[n].size()) << "round " << round;
      for (size_t k = 0; k < brute[n].size(); ++k) {
        const WakeLink& l = streamed.chains[n].links[k];
        EXPECT_EQ(std::make_tuple(l.wait.tid, l.wait.start, l.waker_tid), brute[n][k]);
      }
    }
  }
}

// A contended-mode futex wait on kLock: [start, end), woken by `releaser`.
LockInterval futexWait(uint64_t tid, uint64_t start, uint64_t end, uint64_t releaser) {
  return {.time = start,
          .acquired_time = end,
          .pid = kPid,
          .tid = tid,
          .address = kLock,
          .lock_kind = static_cast<uint64_t>(format::LockKind::kFutex),
          .flags = format::kLockContendedOnly,
          .releaser_tid = releaser};
}

// Contended mode: 2 takes the lock at 100 after a wait; only the next wake
// (at 500, releaser 2) tells that it held it until then. Its samples wait
// that long; another thread's are applied as time passes.
TEST(CorrelateStreaming, HoldsBackOnlyTheRowsASectionMayStillCover) {
  Rows rows;
  rows.locks = {futexWait(2, 0, 100, 1), futexWait(3, 200, 500, 2)};
  for (uint64_t time = 5; time < 1000; time += 10) {
    rows.samples.push_back({.time = time, .pid = kPid, .tid = 4, .stack_id = 9});
    if (time > 100 && time < 500)
      rows.samples.push_back({.time = time + 1, .pid = kPid, .tid = 2, .stack_id = 8});
  }
  byTime(rows.samples);
  Streamed streamed = stream(rows, 1, 4);
  const HeldLock* held = nullptr;
  for (const HeldLock& h : streamed.activity.held) {
    if (h.tid == 2) held = &h;
  }
  ASSERT_NE(held, nullptr);
  EXPECT_TRUE(held->inferred);
  EXPECT_EQ(held->held_ns, 400u);
  EXPECT_EQ(held->samples, 40u);  // 106 ... 496
  // 2's 40 samples, and at most the row of 4 at the current time.
  EXPECT_GE(streamed.footprint.most_rows_held_back, 40u);
  EXPECT_LE(streamed.footprint.most_rows_held_back, 41u);
}

// Why a thread's rows after it took a lock in contended mode wait for that
// lock's next wake, however late: only that wake tells whether the thread
// held the lock all along. Here 2 takes the lock at 100; with a wait woken by
// 2 at 900000 its samples from 100 on were taken holding the lock, without
// one they were not, and nothing 2 does in between tells the two apart.
TEST(CorrelateStreaming, OnlyTheNextWakeTellsWhatAThreadHeldSinceItsAcquisition) {
  Rows quiet;
  quiet.locks = {futexWait(2, 0, 100, 1)};
  for (uint64_t time = 150; time < 1000000; time += 1000) {
    quiet.samples.push_back({.time = time, .pid = kPid, .tid = 2, .stack_id = 8});
    quiet.samples.push_back({.time = time + 500, .pid = kPid, .tid = 4, .stack_id = 9});
  }
  Rows woken = quiet;
  woken.locks.push_back(futexWait(3, 850000, 900000, 2));
  for (const Rows* rows : {&quiet, &woken}) {
    Streamed streamed = stream(*rows, 1, 4);
    HolderActivity expected =
        correlateHolders(buildLockTimeline(rows->locks), {}, rows->samples, {}, {});
    uint64_t inside = 0;
    for (const HeldLock& h : streamed.activity.held) {
      if (h.tid == 2) inside += h.samples;
    }
    uint64_t expected_inside = 0;
    for (const HeldLock& h : expected.held) {
      if (h.tid == 2) expected_inside += h.samples;
    }
    EXPECT_EQ(inside, expected_inside);
    EXPECT_EQ(streamed.footprint.rows_held_back, 0u);
    // 2's samples at 150, 1150, ..., 899150 fall in [100, 900000).
    EXPECT_EQ(inside, rows == &woken ? 900u : 0u);
  }
}

// A wait spanning many short ones: settled waits are dropped once no later
// chain can reach them, and the long wait's chain still finds its links.
TEST(LongestWaitChains, KeepsOnlyTheWaitsAChainCanStillReach) {
  LongestWaitChains longest(1, 3);
  uint64_t time = 0;
  size_t most_kept = 0;
  auto wait = [](uint64_t tid, uint64_t start, uint64_t end, uint64_t releaser) {
    return LockWait{
        .lock = {kPid, kLock}, .tid = tid, .start = start, .end = end, .releaser_tid = releaser};
  };
  for (int i = 0; i < 5000; ++i, time += 100) {
    longest.settle(time);
    // 2 waits 150 for 3, 3 waits 50 for 2, by turns.
    longest.addWait(i % 2 == 0 ? wait(2, time, time + 150, 3) : wait(3, time, time + 50, 2));
    most_kept = std::max(most_kept, longest.waitsKept());
    if (i == 4000) longest.addWait(wait(1, time, time + 20000, 2));  // waits 200 short ones
  }
  std::vector<WakeChain> chains = longest.finish();
  ASSERT_EQ(chains.size(), 1u);
  ASSERT_EQ(chains[0].links.size(), 3u);
  EXPECT_EQ(chains[0].links[0].wait.tid, 1u);
  // 2's longest waits inside 1's all last 150: the earliest; then 3's inside that.
  EXPECT_EQ(chains[0].links[1].wait.tid, 2u);
  EXPECT_EQ(chains[0].links[1].wait.start, 400000u);
  EXPECT_EQ(chains[0].links[2].wait.tid, 3u);
  EXPECT_EQ(chains[0].links[2].wait.start, 400100u);
  EXPECT_LT(most_kept, 1200u);  // not the 5,000
}

}  // namespace
}  // namespace incise::analyzer
