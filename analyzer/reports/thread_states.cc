#include "analyzer/reports/thread_states.h"

#include "analyzer/model/time_ordered_rows.h"

namespace incise::analyzer {

std::pair<ThreadStateMachine::Thread&, ThreadSchedStats&> ThreadStateMachine::thread(
    uint64_t tid, uint64_t pid, uint64_t time) {
  uint32_t id = static_cast<uint32_t>(tid);
  auto [stats, inserted] = stats_.try_emplace(id);
  if (inserted) stats->second.first_time = time;
  if (pid != 0) stats->second.pid = static_cast<uint32_t>(pid);
  return {threads_[id], stats->second};
}

void ThreadStateMachine::switchIn(uint32_t tid, uint32_t pid, uint64_t time, uint64_t cpu) {
  auto [t, stats] = thread(tid, pid, time);
  if (t.state == State::kRunnable) {
    RunnableSpan span{stats.pid, tid, t.since, time, t.after_preemption};
    stats.runnable_ns += span.duration();
    stats.runqueue_waits += 1;
    stats.runqueue_total_ns += span.duration();
    stats.runqueue_max_ns = std::max(stats.runqueue_max_ns, span.duration());
    if (on_runnable) on_runnable(span);
  } else if (t.state == State::kBlocked) {
    stats.blocked_ns += time - t.since;  // the wake-up was not seen
  }
  if (t.switched_out) {
    OffCpuSpan span{stats.pid, tid, t.out_time, time, t.out_state == 0, t.out_state, t.out_stack};
    if (on_off_cpu) on_off_cpu(span);
    t.switched_out = false;
  }
  if (t.last_cpu >= 0 && static_cast<uint64_t>(t.last_cpu) != cpu) stats.migrations += 1;
  t.last_cpu = static_cast<int64_t>(cpu);
  t.state = State::kRunning;
  t.since = time;
  t.woken_while_running = false;
}

void ThreadStateMachine::switchOut(const format::SchedSwitch& row) {
  uint32_t tid = static_cast<uint32_t>(row.prev_tid);
  auto [t, stats] = thread(tid, row.prev_pid, row.time);
  if (t.state == State::kRunning) stats.running_ns += row.time - t.since;
  bool preempted = row.prev_state == 0;
  (preempted ? stats.involuntary_switches : stats.voluntary_switches) += 1;
  t.after_preemption = preempted;
  t.state = preempted || t.woken_while_running ? State::kRunnable : State::kBlocked;
  t.since = row.time;
  t.woken_while_running = false;
  t.switched_out = true;
  t.out_time = row.time;
  t.out_state = row.prev_state;
  t.out_stack = row.stack_id;
}

void ThreadStateMachine::onSwitch(const format::SchedSwitch& row) {
  if (row.prev_tid != 0) switchOut(row);
  if (row.next_tid != 0) {
    switchIn(static_cast<uint32_t>(row.next_tid), static_cast<uint32_t>(row.next_pid), row.time,
             row.cpu);
  }
}

void ThreadStateMachine::onWakeup(const format::Wakeup& row) {
  if (row.wakee_tid == 0) return;
  auto [t, stats] = thread(row.wakee_tid, row.wakee_pid, row.time);
  stats.wakeups += 1;
  switch (t.state) {
    case State::kBlocked:
      stats.blocked_ns += row.time - t.since;
      [[fallthrough]];
    case State::kUnknown:
      t.state = State::kRunnable;
      t.since = row.time;
      t.after_preemption = false;
      break;
    case State::kRunning:
      t.woken_while_running = true;
      break;
    case State::kRunnable:
      break;
  }
}

void ThreadStateMachine::finish(uint64_t end) {
  for (auto& [tid, t] : threads_) {
    ThreadSchedStats& stats = stats_[tid];
    uint64_t elapsed = end > t.since ? end - t.since : 0;
    switch (t.state) {
      case State::kRunning:
        stats.running_ns += elapsed;
        break;
      case State::kRunnable:
        stats.runnable_ns += elapsed;
        break;
      case State::kBlocked:
        stats.blocked_ns += elapsed;
        break;
      case State::kUnknown:
        break;
    }
    t.state = State::kUnknown;
  }
}

namespace {

// A sorted vector with TimeOrderedRows' peek/pop.
template <typename Row>
class VectorRows {
 public:
  explicit VectorRows(const std::vector<Row>& rows) : rows_(rows) {}
  const Row* peek() const { return next_ < rows_.size() ? &rows_[next_] : nullptr; }
  void pop() { ++next_; }

 private:
  const std::vector<Row>& rows_;
  size_t next_ = 0;
};

// On a tie the wake-up goes first; `wakeups` may be null.
template <typename Switches, typename Wakeups>
void mergeSchedule(Switches& switches, Wakeups* wakeups, const OnSwitch& on_switch,
                   const OnWakeup& on_wakeup) {
  for (;;) {
    const format::SchedSwitch* s = switches.peek();
    const format::Wakeup* w = wakeups ? wakeups->peek() : nullptr;
    if (w && (!s || w->time <= s->time)) {
      on_wakeup(*w);
      wakeups->pop();
    } else if (s) {
      on_switch(*s);
      switches.pop();
    } else {
      return;
    }
  }
}

}  // namespace

void forEachScheduleEvent(const std::vector<format::SchedSwitch>& switches,
                          const std::vector<format::Wakeup>& wakeups, const OnSwitch& on_switch,
                          const OnWakeup& on_wakeup) {
  VectorRows<format::SchedSwitch> switch_rows(switches);
  VectorRows<format::Wakeup> wakeup_rows(wakeups);
  mergeSchedule(switch_rows, &wakeup_rows, on_switch, on_wakeup);
}

void forEachScheduleEvent(Trace& trace, Replay what, const OnSwitch& on_switch,
                          const OnWakeup& on_wakeup) {
  TimeOrderedRows<format::SchedSwitch> switches(trace);
  if (what == Replay::kSwitches) {
    mergeSchedule(switches, static_cast<TimeOrderedRows<format::Wakeup>*>(nullptr), on_switch,
                  on_wakeup);
    return;
  }
  TimeOrderedRows<format::Wakeup> wakeups(trace, /*progress=*/false);
  mergeSchedule(switches, &wakeups, on_switch, on_wakeup);
}

void replaySchedule(const std::vector<format::SchedSwitch>& switches,
                    const std::vector<format::Wakeup>& wakeups, ThreadStateMachine& machine) {
  forEachScheduleEvent(
      switches, wakeups, [&](const format::SchedSwitch& s) { machine.onSwitch(s); },
      [&](const format::Wakeup& w) { machine.onWakeup(w); });
}

void replaySchedule(Trace& trace, Replay what, ThreadStateMachine& machine) {
  forEachScheduleEvent(
      trace, what, [&](const format::SchedSwitch& s) { machine.onSwitch(s); },
      [&](const format::Wakeup& w) { machine.onWakeup(w); });
}

}  // namespace incise::analyzer
