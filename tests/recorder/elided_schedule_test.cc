// A schedule written whole and the same schedule through ShortBlocks (short
// sleeps, and short preemptions unless every one is written, summarised,
// their halves elided, rows left out) replay to the same thread states: the
// elided replay reads a summarised interval as running, and the block
// summaries give it back as off-CPU or runqueue time.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <random>
#include <tuple>
#include <variant>
#include <vector>

#include "analyzer/analyses/sched/thread_states.h"
#include "recorder/sources/short_blocks.h"

namespace incise {
namespace {

using analyzer::RecordedThreads;
using analyzer::ThreadSchedStats;
using analyzer::ThreadStateMachine;
using recorder::ShortBlocks;

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMinBlock = 1000 * kUs;
constexpr uint32_t kPid = 100, kA = 101, kB = 102, kC = 103;
constexpr uint32_t kOutsiderPid = 9, kOutsider = 900;
constexpr size_t kCpus = 2;

struct Schedule {
  std::vector<ShortBlocks::Row> rows;  // in time order
  uint64_t end = 0;
};

// A kernel's view of three target threads and an outsider on two cpus: the
// targets sleep (mostly for tens of microseconds, sometimes for milliseconds)
// or are preempted, hand the cpu to each other or to the outsider or idle,
// and come back on either cpu once woken.
Schedule simulate(uint32_t seed, int steps) {
  enum class State { kRunning, kSleeping, kRunnable };
  struct Target {
    uint32_t tid;
    State state = State::kRunning;
    uint64_t wake_at = 0;
  };
  std::array<Target, 3> targets{{{kA}, {kB}, {kC, State::kRunnable}}};
  std::array<uint32_t, kCpus> running{kA, kB};
  std::mt19937 random(seed);
  auto uniform = [&](uint64_t low, uint64_t high) {
    return std::uniform_int_distribution<uint64_t>(low, high)(random);
  };
  auto pidOf = [](uint32_t tid) -> uint64_t {
    return tid == 0 ? 0 : tid == kOutsider ? kOutsiderPid : kPid;
  };
  Schedule schedule;
  uint64_t now = 0;
  for (int step = 0; step < steps; ++step) {
    now += uniform(2, 40) * kUs;
    for (Target& t : targets) {
      if (t.state == State::kSleeping && t.wake_at <= now) {
        t.state = State::kRunnable;
        schedule.rows.emplace_back(format::Wakeup{.time = now,
                                                  .waker_pid = kOutsiderPid,
                                                  .waker_tid = kOutsider,
                                                  .wakee_pid = kPid,
                                                  .wakee_tid = t.tid});
      }
    }
    const auto cpu = static_cast<size_t>(uniform(0, kCpus - 1));
    Target* prev = nullptr;
    for (Target& t : targets)
      if (t.tid == running[cpu]) prev = &t;
    Target* next = nullptr;
    for (Target& t : targets)
      if (t.state == State::kRunnable && (next == nullptr || uniform(0, 1) == 1)) next = &t;
    if (prev == nullptr && next == nullptr) continue;  // no switch a target takes part in
    uint64_t prev_state = 0;
    if (prev != nullptr) {
      bool preempted = next != nullptr && uniform(0, 3) == 0;
      if (preempted) {
        prev->state = State::kRunnable;
      } else {
        prev_state = 1;
        prev->state = State::kSleeping;
        prev->wake_at = now + (uniform(0, 5) == 0 ? uniform(1100, 3000) : uniform(5, 300)) * kUs;
      }
    }
    uint32_t next_tid = next != nullptr ? next->tid : uniform(0, 2) == 0 ? kOutsider : 0;
    if (next != nullptr) next->state = State::kRunning;
    schedule.rows.emplace_back(format::SchedSwitch{.time = now,
                                                   .cpu = cpu,
                                                   .prev_pid = pidOf(running[cpu]),
                                                   .prev_tid = running[cpu],
                                                   .prev_state = prev_state,
                                                   .next_pid = pidOf(next_tid),
                                                   .next_tid = next_tid,
                                                   .stack_id = prev_state != 0 ? 7u : 0u});
    running[cpu] = next_tid;
  }
  schedule.end = now + 10 * kUs;
  return schedule;
}

bool isTarget(uint64_t tid) {
  return tid == kA || tid == kB || tid == kC;
}

struct Replayed {
  std::map<uint32_t, ThreadSchedStats> threads;
  analyzer::ScheduleConsistency consistency;
};

Replayed replay(const std::vector<ShortBlocks::Row>& rows, uint64_t end,
                const std::vector<format::BlockSummary>& summaries) {
  ThreadStateMachine machine(RecordedThreads::only({kPid}));
  machine.observeFrom(1);
  for (const ShortBlocks::Row& row : rows) {
    if (const auto* s = std::get_if<format::SchedSwitch>(&row)) {
      machine.onSwitch(*s);
    } else {
      machine.onWakeup(std::get<format::Wakeup>(row));
    }
  }
  machine.finish(end);
  for (const format::BlockSummary& summary : summaries) machine.addBlockSummary(summary);
  return {machine.threads(), machine.consistency()};
}

// The time `tid` spent preempted: from each switch-out in state 0 to its next switch-in.
uint64_t preemptedNs(const std::vector<ShortBlocks::Row>& rows, uint32_t tid) {
  uint64_t total = 0, since = 0;
  bool preempted = false;
  for (const ShortBlocks::Row& row : rows) {
    const auto* s = std::get_if<format::SchedSwitch>(&row);
    if (s == nullptr) continue;
    if (preempted && s->next_tid == tid) {
      total += s->time - since;
      preempted = false;
    }
    if (s->prev_tid == tid && s->prev_state == 0) {
      preempted = true;
      since = s->time;
    }
  }
  return total;
}

struct Elided {
  std::vector<ShortBlocks::Row> rows;
  std::vector<format::BlockSummary> summaries;
  ShortBlocks::Counts counts;
  uint64_t rows_after_left_out = 0;  // written with switch_elided::kCpuRowsBefore
};

// What the scheduler program does with wake-ups (bpf/sched.bpf.c,
// thread_blocks): one that ends a target's block while the block is still
// short, except the thread's first, is held; at the block's switch-in it is
// sent first if the block turned out long, else dropped and flagged on the
// switch.
class KernelHeldWakeups {
 public:
  // The wake-up to send before `s`, if any; sets `dropped` when one was held and dropped.
  std::optional<format::Wakeup> onSwitch(const format::SchedSwitch& s, bool& dropped) {
    std::optional<format::Wakeup> send;
    dropped = false;
    if (auto it = blocks_.find(s.next_tid); it != blocks_.end() && it->second.held) {
      if (s.time - it->second.since >= kMinBlock)
        send = it->second.held;
      else
        dropped = true;
      it->second.held.reset();
    }
    if (isTarget(s.prev_tid) && s.prev_state != 0) {
      auto [it, inserted] = blocks_.try_emplace(s.prev_tid);
      it->second = {.since = s.time, .first = inserted};
    }
    return send;
  }
  // Whether `w` is held.
  bool onWakeup(const format::Wakeup& w) {
    auto it = blocks_.find(w.wakee_tid);
    if (it == blocks_.end() || it->second.first || it->second.held ||
        w.time - it->second.since >= kMinBlock)
      return false;
    it->second.held = w;
    return true;
  }

 private:
  struct Block {
    uint64_t since = 0;
    bool first = true;
    std::optional<format::Wakeup> held;
  };
  std::map<uint64_t, Block> blocks_;
};

Elided throughShortBlocks(const Schedule& schedule, ShortBlocks::Preemptions preemptions,
                          bool hold_wakeups) {
  ShortBlocks blocks(kMinBlock, preemptions);
  KernelHeldWakeups kernel;
  Elided out;
  auto take = [&] {
    for (ShortBlocks::Row& row : blocks.takeReady()) out.rows.push_back(std::move(row));
    for (const format::BlockSummary& s : blocks.takeSummaries()) out.summaries.push_back(s);
  };
  for (const ShortBlocks::Row& row : schedule.rows) {
    if (const auto* s = std::get_if<format::SchedSwitch>(&row)) {
      bool held_dropped = false;
      std::optional<format::Wakeup> held = kernel.onSwitch(*s, held_dropped);
      if (!hold_wakeups) held_dropped = false;
      if (held && hold_wakeups) blocks.onWakeup(*held, true);
      blocks.onSwitch(*s, isTarget(s->prev_tid), isTarget(s->next_tid), {0, 0}, held_dropped);
    } else {
      const auto& w = std::get<format::Wakeup>(row);
      if (!(hold_wakeups && isTarget(w.wakee_tid) && kernel.onWakeup(w)))
        blocks.onWakeup(w, isTarget(w.wakee_tid));
    }
    take();
  }
  blocks.finish();
  take();
  out.counts = blocks.counts();
  for (const ShortBlocks::Row& row : out.rows)
    if (const auto* s = std::get_if<format::SchedSwitch>(&row);
        s != nullptr && (s->elided & format::switch_elided::kCpuRowsBefore) != 0)
      ++out.rows_after_left_out;
  // A wake-up sent at its block's switch-in arrives after rows of later times;
  // the analyzer reads every kind in time order.
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [](const ShortBlocks::Row& a, const ShortBlocks::Row& b) {
                     auto time = [](const ShortBlocks::Row& r) {
                       return std::visit([](const auto& x) { return x.time; }, r);
                     };
                     return time(a) < time(b);
                   });
  return out;
}

class ElidedSchedule
    : public ::testing::TestWithParam<std::tuple<uint32_t, ShortBlocks::Preemptions, bool>> {};

TEST_P(ElidedSchedule, ReplaysToTheStatesOfTheWholeSchedule) {
  const auto [seed, preemptions, hold_wakeups] = GetParam();
  Schedule schedule = simulate(seed, 4000);
  Elided elided = throughShortBlocks(schedule, preemptions, hold_wakeups);
  // The schedule exercises every kind of elision; it has no futex waits, so
  // short preemptions are summarised unless every one is written.
  EXPECT_GT(elided.counts.short_blocks, 200u);
  EXPECT_GT(elided.counts.switches_dropped, 100u);
  EXPECT_GT(elided.counts.switches_half_elided, 5u);
  EXPECT_GT(elided.rows_after_left_out, 20u);
  if (preemptions == ShortBlocks::Preemptions::kWritten) {
    EXPECT_GT(elided.counts.short_preemptions_kept, 5u);
    EXPECT_EQ(elided.counts.short_preemptions_summarised, 0u);
  } else {
    // Only a thread's first switch-out, written whatever it is.
    EXPECT_LE(elided.counts.short_preemptions_kept, 3u);
    EXPECT_GT(elided.counts.short_preemptions_summarised, 5u);
  }
  EXPECT_LT(elided.rows.size(), schedule.rows.size() / 2);
  if (hold_wakeups)
    EXPECT_GT(elided.counts.wakeups_held, 100u);
  else
    EXPECT_EQ(elided.counts.wakeups_held, 0u);

  Replayed whole = replay(schedule.rows, schedule.end, {});
  Replayed summarised = replay(elided.rows, schedule.end, elided.summaries);
  EXPECT_EQ(whole.consistency.inconsistencies(), 0u);
  EXPECT_EQ(summarised.consistency.missing_switch_ins, 0u);
  EXPECT_EQ(summarised.consistency.missing_switch_outs, 0u);
  EXPECT_EQ(summarised.consistency.summarized_blocks, elided.counts.short_blocks);
  EXPECT_EQ(summarised.consistency.summarized_ns, elided.counts.short_block_ns);
  ASSERT_EQ(whole.threads.size(), 3u);
  ASSERT_EQ(summarised.threads.size(), 3u);
  for (uint32_t tid : {kA, kB, kC}) {
    const ThreadSchedStats& w = whole.threads.at(tid);
    const ThreadSchedStats& s = summarised.threads.at(tid);
    SCOPED_TRACE(tid);
    EXPECT_GT(w.running_ns, 0u);
    EXPECT_EQ(s.running_ns, w.running_ns);
    // A summarised sleep is all blocked: its wake-up's runqueue wait is in it.
    EXPECT_EQ(s.blocked_ns + s.runnable_ns, w.blocked_ns + w.runnable_ns);
    EXPECT_GE(s.blocked_ns, w.blocked_ns);
    EXPECT_EQ(s.voluntary_switches, w.voluntary_switches);
    EXPECT_EQ(s.involuntary_switches, w.involuntary_switches);
    EXPECT_EQ(s.wakeups, w.wakeups);
    // Each preemption, written or summarised, is a wait in the runqueue.
    EXPECT_GE(w.runqueue_total_ns, preemptedNs(schedule.rows, tid));
    EXPECT_GE(s.runqueue_total_ns, preemptedNs(schedule.rows, tid));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Seeds, ElidedSchedule,
    ::testing::Combine(::testing::Values(1u, 2u, 3u),
                       ::testing::Values(ShortBlocks::Preemptions::kWritten,
                                         ShortBlocks::Preemptions::kSummarisedOutsideWaits),
                       ::testing::Bool()));

}  // namespace
}  // namespace incise
