#include "analyzer/export/thread_state_spans.h"

#include <array>

namespace incise::analyzer {
namespace {

using Totals = std::array<uint64_t, 3>;  // indexed by ThreadState

Totals totalsOf(const ThreadStateMachine& machine, uint32_t tid) {
  auto found = machine.threads().find(tid);
  if (found == machine.threads().end()) return {};
  const ThreadSchedStats& s = found->second;
  return {s.running_ns, s.runnable_ns, s.blocked_ns};
}

// Reports what each of `tids` gained while `apply` ran, as spans ending at `time`.
template <typename Apply>
void step(ThreadStateMachine& machine, std::initializer_list<uint32_t> tids, uint64_t time,
          const std::function<void(const StateSpan&)>& visit, Apply&& apply) {
  std::array<Totals, 2> before{};
  size_t i = 0;
  for (uint32_t tid : tids) before[i++] = totalsOf(machine, tid);
  apply();
  i = 0;
  for (uint32_t tid : tids) {
    Totals after = totalsOf(machine, tid);
    uint32_t pid = tid == 0 ? 0 : machine.threads().at(tid).pid;
    for (size_t state = 0; state < after.size(); ++state) {
      uint64_t gained = after[state] - before[i][state];
      if (gained != 0 && tid != 0) {
        visit({pid, tid, static_cast<ThreadState>(state), time - gained, time});
      }
    }
    ++i;
  }
}

}  // namespace

std::string_view threadStateName(ThreadState state) {
  switch (state) {
    case ThreadState::kRunning:
      return "running";
    case ThreadState::kRunnable:
      return "runnable";
    case ThreadState::kBlocked:
      return "blocked";
  }
  return "?";
}

namespace {

using ScheduleReplay = std::function<void(const OnSwitch&, const OnWakeup&)>;

void replayStateSpans(const ScheduleReplay& replay, uint64_t end,
                      const std::function<void(const StateSpan&)>& visit,
                      ThreadStateMachine& machine) {
  replay(
      [&](const format::SchedSwitch& row) {
        uint32_t prev = static_cast<uint32_t>(row.prev_tid),
                 next = static_cast<uint32_t>(row.next_tid);
        if (prev == next) {
          step(machine, {prev}, row.time, visit, [&] { machine.onSwitch(row); });
        } else {
          step(machine, {prev, next}, row.time, visit, [&] { machine.onSwitch(row); });
        }
      },
      [&](const format::Wakeup& row) {
        step(machine, {static_cast<uint32_t>(row.wakee_tid)}, row.time, visit,
             [&] { machine.onWakeup(row); });
      });
  std::vector<std::pair<uint32_t, Totals>> before;
  for (const auto& [tid, stats] : machine.threads())
    before.emplace_back(tid, totalsOf(machine, tid));
  machine.finish(end);
  for (const auto& [tid, totals] : before) {
    Totals after = totalsOf(machine, tid);
    for (size_t state = 0; state < after.size(); ++state) {
      uint64_t gained = after[state] - totals[state];
      if (gained != 0 && tid != 0) {
        visit({machine.threads().at(tid).pid, tid, static_cast<ThreadState>(state), end - gained,
               end});
      }
    }
  }
}

}  // namespace

void replayStateSpans(const std::vector<format::SchedSwitch>& switches,
                      const std::vector<format::Wakeup>& wakeups, uint64_t end,
                      const std::function<void(const StateSpan&)>& visit,
                      ThreadStateMachine& machine) {
  replayStateSpans(
      [&](const OnSwitch& on_switch, const OnWakeup& on_wakeup) {
        forEachScheduleEvent(switches, wakeups, on_switch, on_wakeup);
      },
      end, visit, machine);
}

void replayStateSpans(Trace& trace, uint64_t end,
                      const std::function<void(const StateSpan&)>& visit,
                      ThreadStateMachine& machine) {
  replayStateSpans(
      [&](const OnSwitch& on_switch, const OnWakeup& on_wakeup) {
        forEachScheduleEvent(trace, Replay::kSwitchesAndWakeups, on_switch, on_wakeup);
      },
      end, visit, machine);
}

}  // namespace incise::analyzer
