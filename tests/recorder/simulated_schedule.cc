// The simulated schedule: see simulated_schedule.h.
#include "tests/recorder/simulated_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>

namespace incise::testing {

SimulatedSchedule simulateSchedule(uint32_t seed, int steps) {
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
  SimulatedSchedule schedule;
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
                                                   .stack_id = prev_state != 0 ? kSleepStack : 0u});
    running[cpu] = next_tid;
  }
  schedule.end = now + 10 * kUs;
  return schedule;
}

bool isSimulatedTarget(uint64_t tid) {
  return tid == kA || tid == kB || tid == kC;
}

ReplayedSchedule replaySchedule(const std::vector<ScheduleRow>& rows, uint64_t end,
                                const std::vector<format::BlockSummary>& summaries) {
  analyzer::ThreadStateMachine machine(analyzer::RecordedThreads::only({kPid}));
  machine.observeFrom(1);
  for (const ScheduleRow& row : rows) {
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
uint64_t preemptedNs(const std::vector<ScheduleRow>& rows, uint32_t tid) {
  uint64_t total = 0, since = 0;
  bool preempted = false;
  for (const ScheduleRow& row : rows) {
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

void expectSameThreadStates(const ReplayedSchedule& whole, const ReplayedSchedule& summarised,
                            const std::vector<ScheduleRow>& whole_rows) {
  ASSERT_EQ(whole.threads.size(), 3u);
  ASSERT_EQ(summarised.threads.size(), 3u);
  for (uint32_t tid : {kA, kB, kC}) {
    const analyzer::ThreadSchedStats& w = whole.threads.at(tid);
    const analyzer::ThreadSchedStats& s = summarised.threads.at(tid);
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
    EXPECT_GE(w.runqueue_total_ns, preemptedNs(whole_rows, tid));
    EXPECT_GE(s.runqueue_total_ns, preemptedNs(whole_rows, tid));
  }
}

uint64_t timeOf(const ScheduleRow& row) {
  return std::visit([](const auto& r) { return r.time; }, row);
}

void sortByTime(std::vector<ScheduleRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const ScheduleRow& a, const ScheduleRow& b) {
    return timeOf(a) < timeOf(b);
  });
}

}  // namespace incise::testing
