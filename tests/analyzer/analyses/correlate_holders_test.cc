// Known answers for the holder correlation: preempted and blocked holders,
// samples and faults inside vs outside sections, nested locks, overlapping
// waits, and inferred (contended-mode) sections.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/holder_activity.h"
#include "tests/analyzer/analyses/work_growth.h"

namespace incise::analyzer {
namespace {

using format::CpuSample;
using format::LockInterval;
using format::PageFault;
using format::SchedSwitch;

constexpr uint64_t kPid = 100;
constexpr uint64_t kLock = 0x5000;
constexpr uint64_t kInner = 0x7000;
constexpr uint64_t kPreempted = 0;
constexpr uint64_t kBlocked = 1;  // TASK_INTERRUPTIBLE

LockInterval lockRow(uint64_t tid, uint64_t address, uint64_t request, uint64_t acquired,
                     uint64_t release, uint64_t stack, uint64_t flags = 0, uint64_t releaser = 0) {
  return {.time = request,
          .acquired_time = acquired,
          .release_time = release,
          .pid = kPid,
          .tid = tid,
          .address = address,
          .lock_kind = static_cast<uint64_t>(release == 0 ? format::LockKind::kFutex
                                                          : format::LockKind::kMutex),
          .flags = flags,
          .stack_id = stack,
          .releaser_tid = releaser};
}

SchedSwitch switchOut(uint64_t time, uint64_t tid, uint64_t state) {
  return {.time = time, .prev_pid = kPid, .prev_tid = tid, .prev_state = state};
}
SchedSwitch switchIn(uint64_t time, uint64_t tid) {
  return {.time = time, .next_pid = kPid, .next_tid = tid};
}
CpuSample sample(uint64_t time, uint64_t tid, uint64_t stack) {
  return {.time = time, .pid = kPid, .tid = tid, .stack_id = stack, .weight = 1};
}
PageFault fault(uint64_t time, uint64_t tid, uint64_t stack) {
  return {.time = time, .pid = kPid, .tid = tid, .address = 0xdead000, .stack_id = stack};
}

const HeldLock& heldBy(const HolderActivity& a, uint64_t tid, uint64_t address) {
  for (const HeldLock& h : a.held) {
    if (h.tid == tid && h.lock.address == address) return h;
  }
  static const HeldLock kMissing;
  ADD_FAILURE() << "no held lock for tid " << tid;
  return kMissing;
}

const ThreadActivity& thread(const HolderActivity& a, uint64_t tid) {
  for (const ThreadActivity& t : a.threads) {
    if (t.tid == tid) return t;
  }
  static const ThreadActivity kMissing;
  ADD_FAILURE() << "no thread " << tid;
  return kMissing;
}

// Thread 1 holds kLock over [1000, 5000): preempted over [2000, 3000),
// blocked over [3500, 4000). Thread 2 waits [1500, 5000); thread 3 waits
// [3200, 5500).
struct PreemptedHolder : ::testing::Test {
  std::vector<LockInterval> locks = {
      lockRow(1, kLock, 1000, 1000, 5000, 11),
      lockRow(2, kLock, 1500, 5000, 5500, 12, format::kLockContended),
      lockRow(3, kLock, 3200, 5500, 5600, 13, format::kLockContended),
  };
  std::vector<SchedSwitch> switches = {
      switchOut(2000, 1, kPreempted), switchIn(3000, 1),
      switchOut(3500, 1, kBlocked),   switchIn(4000, 1),
      switchOut(6000, 1, kPreempted), switchIn(6500, 1),
  };
  std::vector<CpuSample> samples = {sample(1200, 1, 21), sample(4500, 1, 21), sample(7000, 1, 22),
                                    sample(4000, 2, 23)};
  std::vector<PageFault> faults = {fault(500, 1, 30), fault(1000, 1, 31), fault(2500, 1, 32),
                                   fault(5000, 1, 33)};
};

TEST_F(PreemptedHolder, SwitchesAndOffCpuTimeInsideTheSection) {
  LockTimeline t = buildLockTimeline(locks);
  HolderActivity a = correlateHolders(t, switches, samples, faults, {});
  const HeldLock& h = heldBy(a, 1, kLock);
  EXPECT_EQ(h.sections, 1u);
  EXPECT_EQ(h.sections_switched_out, 1u);
  EXPECT_EQ(h.held_ns, 4000u);
  EXPECT_EQ(h.preempted_switches, 1u);
  EXPECT_EQ(h.blocked_switches, 1u);
  EXPECT_EQ(h.off_cpu_preempted_ns, 1000u);
  EXPECT_EQ(h.off_cpu_blocked_ns, 500u);
  EXPECT_EQ(h.site, 11u);
  EXPECT_FALSE(h.inferred);
  EXPECT_EQ(a.held.front().tid, 1u);  // the most off-CPU time comes first
}

TEST_F(PreemptedHolder, WaitersTimeOverlappingTheHolder) {
  LockTimeline t = buildLockTimeline(locks);
  HolderActivity a = correlateHolders(t, switches, samples, faults, {});
  const HeldLock& h = heldBy(a, 1, kLock);
  // Thread 2: 1000 + 500 while off-CPU; thread 3: 0 + 500.
  EXPECT_EQ(h.waiter_ns_while_off_cpu, 2000u);
  EXPECT_EQ(h.waiters_while_off_cpu, 2u);
  // Thread 2: [1500, 5000) = 3500; thread 3: [3200, 5000) = 1800.
  EXPECT_EQ(h.waiter_ns_while_held, 5300u);
  // Thread 2 holds [5000, 5500) while thread 3 still waits; it never left the CPU.
  const HeldLock& next = heldBy(a, 2, kLock);
  EXPECT_EQ(next.waiter_ns_while_held, 500u);
  EXPECT_EQ(next.waiter_ns_while_off_cpu, 0u);
  EXPECT_EQ(next.sections_switched_out, 0u);
}

TEST_F(PreemptedHolder, FaultsAndSamplesInsideVersusOutside) {
  LockTimeline t = buildLockTimeline(locks);
  HolderActivity a = correlateHolders(t, switches, samples, faults, {});
  const HeldLock& h = heldBy(a, 1, kLock);
  EXPECT_EQ(h.faults, 2u);  // 1000 (at the acquire) and 2500; not 500, not 5000 (released)
  EXPECT_EQ(h.fault_stacks.at(31), 1u);
  EXPECT_EQ(h.fault_stacks.at(32), 1u);
  EXPECT_EQ(h.fault_stacks.count(33), 0u);
  EXPECT_EQ(h.samples, 2u);
  EXPECT_EQ(h.sample_stacks.at(21), 2u);
  const ThreadActivity& holder = thread(a, 1);
  EXPECT_EQ(holder.faults, 4u);
  EXPECT_EQ(holder.faults_in_sections, 2u);
  EXPECT_EQ(holder.samples, 3u);
  EXPECT_EQ(holder.samples_in_sections, 2u);
  EXPECT_EQ(holder.held_ns, 4000u);
  // Thread 2's sample at 4000 is before its section [5000, 5500).
  EXPECT_EQ(thread(a, 2).samples, 1u);
  EXPECT_EQ(thread(a, 2).samples_in_sections, 0u);
}

TEST_F(PreemptedHolder, SitesGroupSectionsOfOneThread) {
  locks.push_back(lockRow(1, kLock, 8000, 8000, 9000, 14));
  switches.push_back(switchOut(8500, 1, kPreempted));
  switches.push_back(switchIn(8600, 1));
  LockTimeline t = buildLockTimeline(locks);
  SiteOf one_site = [](uint64_t) -> uint64_t { return 1; };
  HolderActivity a = correlateHolders(t, switches, samples, faults, one_site);
  const HeldLock& h = heldBy(a, 1, kLock);
  EXPECT_EQ(h.sections, 2u);
  EXPECT_EQ(h.sections_switched_out, 2u);
  EXPECT_EQ(h.preempted_switches, 2u);
  EXPECT_EQ(h.off_cpu_preempted_ns, 1100u);
  EXPECT_EQ(h.held_ns, 5000u);
  EXPECT_EQ(h.site_stack_id, 11u);
  // Without the site merge the two sites are two entries.
  EXPECT_EQ(correlateHolders(t, switches, samples, faults, {}).held.size(), 4u);
}

TEST(HolderActivity, NestedLocksEachSeeTheirPartOfTheOffCpuTime) {
  std::vector<LockInterval> locks = {lockRow(4, kLock, 10000, 10000, 20000, 41),
                                     lockRow(4, kInner, 12000, 12000, 14000, 42)};
  std::vector<SchedSwitch> switches = {switchOut(13000, 4, kPreempted), switchIn(15000, 4)};
  std::vector<PageFault> faults = {fault(13500, 4, 43), fault(16000, 4, 44)};
  LockTimeline t = buildLockTimeline(locks);
  HolderActivity a = correlateHolders(t, switches, {}, faults, {});
  const HeldLock& outer = heldBy(a, 4, kLock);
  const HeldLock& inner = heldBy(a, 4, kInner);
  EXPECT_EQ(outer.off_cpu_preempted_ns, 2000u);
  EXPECT_EQ(inner.off_cpu_preempted_ns, 1000u);  // released at 14000 while off-CPU
  EXPECT_EQ(outer.preempted_switches, 1u);
  EXPECT_EQ(inner.preempted_switches, 1u);
  EXPECT_EQ(outer.faults, 2u);
  EXPECT_EQ(inner.faults, 1u);
  const ThreadActivity& holder = thread(a, 4);
  EXPECT_EQ(holder.faults_in_sections, 2u);  // the nested fault counts once per thread
  EXPECT_EQ(holder.held_ns, 10000u);         // union of both sections
}

TEST(HolderActivity, OverlappingWaitsOnOtherLocksDoNotCount) {
  std::vector<LockInterval> locks = {
      lockRow(1, kLock, 0, 0, 1000, 11),
      lockRow(2, kLock, 100, 1000, 1100, 12, format::kLockContended),
      lockRow(3, kInner, 100, 900, 950, 13, format::kLockContended),
      lockRow(5, kInner, 0, 0, 900, 14),
  };
  std::vector<SchedSwitch> switches = {switchOut(200, 1, kBlocked), switchIn(600, 1)};
  LockTimeline t = buildLockTimeline(locks);
  HolderActivity a = correlateHolders(t, switches, {}, {}, {});
  const HeldLock& h = heldBy(a, 1, kLock);
  EXPECT_EQ(h.off_cpu_blocked_ns, 400u);
  EXPECT_EQ(h.waiter_ns_while_off_cpu, 400u);  // thread 2 only
  EXPECT_EQ(h.waiters_while_off_cpu, 1u);
  EXPECT_EQ(h.waiter_ns_while_held, 900u);
}

TEST(HolderActivity, InferredSectionsOfAContendedTrace) {
  // Thread 6 waits [100, 900) and is woken by 5: 5 held the lock
  // [100, 900) as far as the trace can tell, and was preempted [300, 700).
  std::vector<LockInterval> locks = {
      lockRow(6, kLock, 100, 900, 0, 61, format::kLockContendedOnly, 5)};
  std::vector<SchedSwitch> switches = {switchOut(300, 5, kPreempted), switchIn(700, 5)};
  std::vector<PageFault> faults = {fault(250, 5, 51), fault(950, 5, 52)};
  LockTimeline t = buildLockTimeline(locks);
  HolderActivity a = correlateHolders(t, switches, {}, faults, {});
  const HeldLock& h = heldBy(a, 5, kLock);
  EXPECT_TRUE(h.inferred);
  EXPECT_EQ(h.held_ns, 800u);
  EXPECT_EQ(h.off_cpu_preempted_ns, 400u);
  EXPECT_EQ(h.waiter_ns_while_off_cpu, 400u);
  EXPECT_EQ(h.waiters_while_off_cpu, 1u);
  EXPECT_EQ(h.faults, 1u);
  EXPECT_EQ(h.site_stack_id, 0u);
}

// A section acquired and released at one time ([1000, 1000), e.g. at the
// clock's resolution) happened but holds nothing: the preemption, fault and
// sample that follow it outside any section are not charged to its lock,
// nor to the thread's time in sections; a later real section still is.
TEST(HolderActivity, AZeroLengthSectionHoldsNothingAfterIt) {
  std::vector<LockInterval> locks = {lockRow(1, kLock, 900, 1000, 1000, 11),
                                     lockRow(1, kInner, 5000, 5000, 6000, 12)};
  std::vector<SchedSwitch> switches = {switchOut(1000, 1, kPreempted), switchIn(1500, 1),
                                       switchOut(2000, 1, kPreempted), switchIn(3000, 1)};
  std::vector<CpuSample> samples = {sample(1000, 1, 21), sample(2600, 1, 22), sample(5500, 1, 23)};
  std::vector<PageFault> faults = {fault(2500, 1, 31)};
  LockTimeline t = buildLockTimeline(locks);
  HolderActivity a = correlateHolders(t, switches, samples, faults, {});
  const HeldLock& zero = heldBy(a, 1, kLock);
  EXPECT_EQ(zero.sections, 1u);
  EXPECT_EQ(zero.held_ns, 0u);
  EXPECT_EQ(zero.sections_switched_out, 0u);
  EXPECT_EQ(zero.preempted_switches, 0u);
  EXPECT_EQ(zero.off_cpu_ns(), 0u);
  EXPECT_EQ(zero.samples, 0u);
  EXPECT_EQ(zero.faults, 0u);
  const HeldLock& later = heldBy(a, 1, kInner);
  EXPECT_EQ(later.samples, 1u);
  EXPECT_EQ(later.sample_stacks.at(23), 1u);
  const ThreadActivity& holder = thread(a, 1);
  EXPECT_EQ(holder.samples, 3u);
  EXPECT_EQ(holder.samples_in_sections, 1u);
  EXPECT_EQ(holder.faults_in_sections, 0u);
  EXPECT_EQ(holder.held_ns, 1000u);  // the real section only
}

// Contended mode: 5 and 6 are woken at one time, 6 by 5, which had just
// taken the lock: 5's inferred section is [500, 500). Nothing later tells
// that 5 held the lock, so its rows after 500 are outside every section,
// and once settled nothing of that section is kept.
TEST(HolderActivity, AZeroLengthInferredSectionHoldsNothingAfterIt) {
  std::vector<LockInterval> locks = {
      lockRow(5, kLock, 100, 500, 0, 51, format::kLockContendedOnly, 4),
      lockRow(6, kLock, 200, 500, 0, 61, format::kLockContendedOnly, 5)};
  std::vector<SchedSwitch> switches = {switchOut(700, 5, kBlocked), switchIn(900, 5)};
  std::vector<PageFault> faults = {fault(800, 5, 52), fault(1000, 5, 53)};
  LockTimeline t = buildLockTimeline(locks);
  HolderActivity a = correlateHolders(t, switches, {}, faults, {});
  const HeldLock& zero = heldBy(a, 5, kLock);
  EXPECT_TRUE(zero.inferred);
  EXPECT_EQ(zero.sections, 1u);
  EXPECT_EQ(zero.held_ns, 0u);
  EXPECT_EQ(zero.blocked_switches, 0u);
  EXPECT_EQ(zero.off_cpu_ns(), 0u);
  EXPECT_EQ(zero.faults, 0u);
  EXPECT_EQ(thread(a, 5).faults_in_sections, 0u);
  EXPECT_EQ(thread(a, 5).held_ns, 0u);

  HolderActivityBuilder builder({});
  for (const CriticalSection& s : t.sections) builder.addSection(s);
  for (const LockWait& w : t.waits) builder.addWait(w);
  for (const SchedSwitch& sw : switches) builder.add(sw);
  builder.settle(2000, nullptr);
  EXPECT_EQ(builder.footprint().open_sections, 0u);
  EXPECT_EQ(builder.footprint().rows_held_back, 0u);
}

TEST(HolderActivity, ASwitchInWithoutASwitchOutAddsNoOffCpuTime) {
  std::vector<LockInterval> locks = {lockRow(1, kLock, 0, 0, 1000, 11)};
  std::vector<SchedSwitch> switches = {switchIn(500, 1)};
  LockTimeline t = buildLockTimeline(locks);
  HolderActivity a = correlateHolders(t, switches, {}, {}, {});
  EXPECT_EQ(heldBy(a, 1, kLock).off_cpu_ns(), 0u);
  EXPECT_EQ(heldBy(a, 1, kLock).sections_switched_out, 0u);
}

// One hot lock, taken in turn by four threads: section i is [100 i,
// 100 i + 100), its holder preempted over [20, 60) inside it, and as it
// ends that holder queues again, waiting 300 ns for its next turn, so
// three threads wait at every moment. Streamed with every row, the
// builder's work measuring sections and spans against the waits grows with
// the sections (n log n), not with sections x waits as a scan of the
// lock's waits per section would (16x for 4x the sections).
uint64_t waitWorkForHotLock(uint64_t sections) {
  HolderActivityBuilder builder({});
  for (uint64_t i = 0; i < sections; ++i) {
    uint64_t start = 100 * i, holder = 1 + i % 4;
    builder.settle(start, nullptr);
    builder.addSection({.lock = {kPid, kLock},
                        .tid = holder,
                        .stack_id = 11,
                        .request = start > 300 ? start - 300 : 0,
                        .start = start,
                        .end = start + 100});
    for (uint64_t first = 1; i == 0 && first <= 3; ++first) {  // the others' first turns
      builder.addWait({.lock = {kPid, kLock}, .tid = 1 + first, .start = 0, .end = 100 * first});
    }
    builder.addWait(
        {.lock = {kPid, kLock}, .tid = holder, .start = start + 100, .end = start + 400});
    builder.add(switchOut(start + 20, holder, kPreempted));
    builder.settle(start + 60, nullptr);
    builder.add(switchIn(start + 60, holder));
  }
  HolderActivity a = builder.finish();
  // Thread 1's sections: 3 waiters x 40 ns each time.
  EXPECT_EQ(heldBy(a, 1, kLock).waiter_ns_while_off_cpu, sections / 4 * 3 * 40);
  EXPECT_EQ(heldBy(a, 1, kLock).waiter_ns_while_held, sections / 4 * 3 * 100);
  EXPECT_EQ(heldBy(a, 1, kLock).waiters_while_off_cpu, 3u);
  return builder.footprint().wait_work;
}

TEST(HolderActivity, WorkAgainstTheWaitsIsLinearOnAHotLock) {
  expectWorkGrowth("wait_work", waitWorkForHotLock, 4000, 4, 6, 4000 * 300);
}

// One lock held across the whole run (a coarse lock, or a holder that never
// lets go) while the holder's samples land on `stacks` distinct stacks, in
// scattered id order, each twice. Counting them per stack must cost n log n
// steps, not the n^2 of inserting each new stack into one sorted vector
// (16x for 4x the stacks).
uint64_t stackWorkForOneLongSection(uint64_t stacks) {
  HolderActivityBuilder builder({});
  builder.addSection(
      {.lock = {kPid, kLock}, .tid = 1, .stack_id = 11, .start = 0, .end = 20 * stacks + 10});
  for (uint64_t i = 0; i < 2 * stacks; ++i) {
    // An odd multiplier permutes the ids: new stacks arrive out of order.
    builder.add(sample(1 + 10 * i, 1, 1 + (i % stacks) * 0x9e3779b97f4a7c15ULL % (1ULL << 40)));
    builder.settle(2 + 10 * i, nullptr);
  }
  HolderActivity a = builder.finish();
  const HeldLock& h = heldBy(a, 1, kLock);
  EXPECT_EQ(h.samples, 2 * stacks);
  EXPECT_EQ(h.sample_stacks.size(), stacks);
  for (uint64_t i = 0; i < stacks; i += stacks / 16) {
    EXPECT_EQ(h.sample_stacks.at(1 + i * 0x9e3779b97f4a7c15ULL % (1ULL << 40)), 2u) << i;
  }
  std::vector<StackCounts::Entry> by_stack = h.sample_stacks.byStack();
  EXPECT_TRUE(std::is_sorted(by_stack.begin(), by_stack.end()));
  return builder.footprint().stack_work;
}

TEST(HolderActivity, CountingDistinctStacksInsideOneSectionIsNotQuadratic) {
  expectWorkGrowth("stack_work", stackWorkForOneLongSection, 4096, 4, 6, 2 * 4096 * 200);
}

}  // namespace
}  // namespace incise::analyzer
