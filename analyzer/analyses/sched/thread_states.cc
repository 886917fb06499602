#include "analyzer/analyses/sched/thread_states.h"

#include <algorithm>

#include "analyzer/model/time_merge.h"
#include "analyzer/model/time_ordered_rows.h"

namespace incise::analyzer {

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

ThreadStateMachine::Thread& ThreadStateMachine::thread(uint64_t tid, uint64_t pid, uint64_t time) {
  uint32_t id = static_cast<uint32_t>(tid);
  auto [found, inserted] = threads_.try_emplace(id);
  Thread& t = found->second;
  if (inserted) {
    t.bystander = !recorded_.followed(static_cast<uint32_t>(pid));
    t.counted = !t.bystander || include_bystanders_;
    if (t.bystander) ++consistency_.bystanders;
  }
  if (t.counted) {
    auto [stats, fresh] = stats_.try_emplace(id);
    if (fresh) {
      stats->second.first_time = time;
      stats->second.bystander = t.bystander;
    }
    if (pid != 0) stats->second.pid = static_cast<uint32_t>(pid);
  }
  return t;
}

void ThreadStateMachine::charge(uint32_t tid, ThreadState state, uint64_t start, uint64_t end) {
  if (end <= start) return;
  ThreadSchedStats& stats = stats_[tid];
  switch (state) {
    case ThreadState::kRunning:
      stats.running_ns += end - start;
      break;
    case ThreadState::kRunnable:
      stats.runnable_ns += end - start;
      break;
    case ThreadState::kBlocked:
      stats.blocked_ns += end - start;
      break;
  }
  if (on_state) on_state({stats.pid, tid, state, start, end});
}

void ThreadStateMachine::startRun(uint32_t tid, Thread& t, uint64_t time, int64_t cpu) {
  ThreadSchedStats& stats = stats_[tid];
  auto waited = [&](bool after_preemption) {
    RunnableSpan span{stats.pid, tid, t.since, time, after_preemption};
    charge(tid, ThreadState::kRunnable, t.since, time);
    stats.addRunqueueWaits(1, span.duration(), span.duration());
    if (on_runnable) on_runnable(span);
  };
  switch (t.state) {
    case State::kRunnable:
      waited(t.after_preemption);
      break;
    case State::kBlocked:
      charge(tid, ThreadState::kBlocked, t.since, time);  // the wake-up was not seen
      break;
    case State::kEnded:
      stats.exit_time = 0;  // a new thread under the same tid
      break;
    case State::kUnknown:
      if (t.woken_unknown) waited(false);  // woken before its first switch: it waited since
      break;
    case State::kRunning:
      break;
  }
  if (t.switched_out) {
    OffCpuSpan span{stats.pid,        tid,         t.out_time,  time,
                    t.out_state == 0, t.out_state, t.out_stack, t.out_goid};
    if (on_off_cpu) on_off_cpu(span);
    t.switched_out = false;
  }
  if (t.cpu >= 0 && t.cpu != cpu) stats.migrations += 1;
  t.cpu = cpu;
  t.state = State::kRunning;
  t.since = time;
  t.woken_while_running = false;
  t.woken_unknown = false;
  t.seen_switch = true;
}

void ThreadStateMachine::switchIn(const format::SchedSwitch& row) {
  uint32_t tid = static_cast<uint32_t>(row.next_tid);
  Thread& t = thread(tid, row.next_pid, row.time);
  if (!t.counted) return;
  int64_t cpu = static_cast<int64_t>(row.cpu);
  if (t.bystander) {
    t.state = State::kRunning;
    t.since = row.time;
    t.cpu = cpu;
    return;
  }
  if (t.state == State::kRunning) {
    if (t.cpu != cpu) {
      // Its switch-out on the other cpu is still to come: the two clocks
      // disagree. It ran there until now and runs here from now, one run
      // without a break.
      t.late_out_cpu = t.cpu;
      t.cpu = cpu;
      stats_[tid].migrations += 1;
      ++consistency_.reordered_switches;
      return;
    }
    // Switched in where it runs: its switch-out is missing, and with it
    // when the run so far ended; that run is not counted.
    ++consistency_.missing_switch_outs;
    t.since = row.time;
    return;
  }
  startRun(tid, t, row.time, cpu);
}

void ThreadStateMachine::runThroughSwitchIn(const format::SchedSwitch& row) {
  auto it = threads_.find(static_cast<uint32_t>(row.next_tid));
  if (it == threads_.end() || it->second.state != State::kRunning) {
    // Its run so far is not in the replay (a --time window began inside
    // it): it runs from here.
    switchIn(row);
    return;
  }
  // Back from a summarised short sleep, perhaps on another cpu: one run.
  it->second.cpu = static_cast<int64_t>(row.cpu);
}

void ThreadStateMachine::switchOut(const format::SchedSwitch& row) {
  uint32_t tid = static_cast<uint32_t>(row.prev_tid);
  Thread& t = thread(tid, row.prev_pid, row.time);
  if (!t.counted) return;
  ThreadSchedStats& stats = stats_[tid];
  int64_t cpu = static_cast<int64_t>(row.cpu);
  bool preempted = row.prev_state == 0;
  bool ended = (row.prev_state & kTaskDead) != 0;
  if (!ended) (preempted ? stats.involuntary_switches : stats.voluntary_switches) += 1;
  if (t.state == State::kRunning && t.cpu >= 0 && t.cpu != cpu) {
    // Rows of this cpu were left out before this one, and the thread's
    // switch-in here can be one of them (it ended a summarised short sleep):
    // it moved here unseen. Otherwise this is the late switch-out from the
    // cpu it has already left (see switchIn).
    bool came_in_unwritten = (row.elided & format::switch_elided::kCpuRowsBefore) != 0 &&
                             t.late_out_cpu != cpu && !t.bystander;
    if (!came_in_unwritten) {
      if (t.late_out_cpu == cpu) t.late_out_cpu = -1;
      return;
    }
    t.cpu = cpu;
  }
  auto last = cpus_.find(row.cpu);  // this cpu's previous recorded switch
  if (t.bystander) {
    // Running only when this cpu recorded nothing since its switch-in here.
    if (t.state == State::kRunning && t.cpu == cpu && last != cpus_.end() &&
        last->second.next_tid == tid && last->second.time == t.since) {
      charge(tid, ThreadState::kRunning, t.since, row.time);
    }
    t.state = State::kUnknown;
    t.cpu = cpu;
    if (ended) stats.exit_time = row.time;
    return;
  }
  if (t.state != State::kRunning) {
    // It ran here before this switch-out, but its switch-in is not in the
    // trace: it cannot have started before this cpu's previous recorded
    // switch (which put another thread here), so it is taken to have run
    // from then (an upper bound); a thread's first switch-out means it ran
    // since the replay began (observeFrom), or since that switch.
    uint64_t from = row.time;
    uint64_t cpu_free = last != cpus_.end() ? last->second.time : 0;
    if (t.seen_switch || t.state != State::kUnknown) {
      if (t.seen_switch) {
        ++consistency_.missing_switch_ins;
        from = std::max(t.since, cpu_free);
      }
    } else if (observed_from_ != 0) {
      from = std::max(observed_from_, cpu_free);
      if (cpu_free > observed_from_) ++consistency_.missing_switch_ins;
      stats.first_time = std::min(stats.first_time, from);
    }
    if (from < row.time) {
      // A wake-up before its first switch, at or after the run's start, raced its switch-out.
      bool woken = t.woken_while_running ||
                   (t.state == State::kUnknown && t.woken_unknown && t.since >= from);
      startRun(tid, t, from, cpu);
      t.woken_while_running = woken;
    }
  }
  if (t.state == State::kRunning) charge(tid, ThreadState::kRunning, t.since, row.time);
  if (t.state == State::kUnknown && t.woken_unknown) t.woken_while_running = true;
  t.woken_unknown = false;
  t.cpu = cpu;
  t.seen_switch = true;
  if (ended) {
    t.state = State::kEnded;
    t.switched_out = false;
    t.woken_while_running = false;
    stats.exit_time = row.time;
    return;
  }
  t.after_preemption = preempted;
  t.state = preempted || t.woken_while_running ? State::kRunnable : State::kBlocked;
  t.woken_while_running = false;
  t.since = row.time;
  t.switched_out = true;
  t.out_time = row.time;
  t.out_state = row.prev_state;
  t.out_stack = row.stack_id;
  t.out_goid = row.goid;
}

void ThreadStateMachine::onSwitch(const format::SchedSwitch& row) {
  namespace elided = format::switch_elided;
  // The thread this cpu last switched to must be the one leaving it now;
  // if another one leaves, the first left unseen (its switch-out is not in
  // the trace): its run since that switch is not counted. When the recorder
  // left rows of this cpu out, that thread went into a summarised short
  // sleep there and runs through it: not a missing switch-out.
  bool rows_left_out = (row.elided & elided::kCpuRowsBefore) != 0;
  if (auto last = cpus_.find(row.cpu); !rows_left_out && last != cpus_.end() &&
                                       last->second.next_tid != 0 &&
                                       last->second.next_tid != row.prev_tid) {
    auto gone = threads_.find(last->second.next_tid);
    if (gone != threads_.end() && gone->second.counted && !gone->second.bystander &&
        gone->second.state == State::kRunning &&
        gone->second.cpu == static_cast<int64_t>(row.cpu)) {
      gone->second.state = State::kUnknown;
      ++consistency_.missing_switch_outs;
    }
  }
  // A half elided by the recorder is not a switch of its thread: prev runs
  // through its short sleep, and next was running through it.
  if (row.prev_tid != 0 && (row.elided & elided::kPrevOut) == 0) switchOut(row);
  if (row.next_tid != 0) {
    if ((row.elided & elided::kNextIn) != 0) {
      runThroughSwitchIn(row);
    } else {
      switchIn(row);
    }
  }
  cpus_[row.cpu] = {row.time, static_cast<uint32_t>(row.next_tid)};
}

void ThreadStateMachine::onWakeup(const format::Wakeup& row) {
  if (row.wakee_tid == 0) return;
  uint32_t tid = static_cast<uint32_t>(row.wakee_tid);
  Thread& t = thread(tid, row.wakee_pid, row.time);
  if (!t.counted) return;
  stats_[tid].wakeups += 1;
  if (t.bystander) return;
  switch (t.state) {
    case State::kBlocked:
      charge(tid, ThreadState::kBlocked, t.since, row.time);
      t.state = State::kRunnable;
      t.since = row.time;
      t.after_preemption = false;
      break;
    case State::kEnded:  // a new thread under the same tid
      stats_[tid].exit_time = 0;
      t.state = State::kUnknown;
      t.seen_switch = false;
      [[fallthrough]];
    case State::kUnknown:
      // Waiting from here, or running already (a wake-up racing its own
      // switch-out): its next switch tells which.
      if (!t.woken_unknown) t.since = row.time;
      t.woken_unknown = true;
      break;
    case State::kRunning:
      t.woken_while_running = true;
      break;
    case State::kRunnable:
      break;
  }
}

void ThreadStateMachine::finish(uint64_t end) {
  for (const auto& entry : stats_) {  // in tid order, so the spans come out in a stable order
    uint32_t tid = entry.first;
    Thread& t = threads_.at(tid);
    if (t.bystander) continue;
    switch (t.state) {
      case State::kRunning:
        charge(tid, ThreadState::kRunning, t.since, end);
        break;
      case State::kRunnable:
        charge(tid, ThreadState::kRunnable, t.since, end);
        break;
      case State::kBlocked:
        charge(tid, ThreadState::kBlocked, t.since, end);
        break;
      case State::kUnknown:
      case State::kEnded:
        break;
    }
    if (t.switched_out && on_off_cpu && t.out_time < end) {
      // Still off the CPU when the trace ends: the span ends with it.
      const ThreadSchedStats& stats = entry.second;
      on_off_cpu({stats.pid, tid, t.out_time, end, t.out_state == 0, t.out_state, t.out_stack,
                  t.out_goid});
    }
    t.switched_out = false;
    if (t.state != State::kEnded) t.state = State::kUnknown;
  }
}

uint64_t ThreadStateMachine::addBlockSummary(const format::BlockSummary& row) {
  auto it = stats_.find(static_cast<uint32_t>(row.tid));
  // Only followed threads' blocks are counted, and such a thread's first
  // block is always written, so it has stats unless the filter left it out.
  if (it == stats_.end() || it->second.bystander || it->second.pid != row.pid) return 0;
  ThreadSchedStats& stats = it->second;
  uint64_t moved = std::min(row.total_ns, stats.running_ns);
  stats.running_ns -= moved;
  if (row.prev_state == 0) {
    // Short preemptions: each was a wait in the runqueue.
    stats.runnable_ns += moved;
    stats.involuntary_switches += row.count;
    stats.addRunqueueWaits(row.count, moved, row.max_ns);
  } else {
    stats.blocked_ns += moved;
    stats.voluntary_switches += row.count;
  }
  stats.wakeups += row.wakeups;
  consistency_.summarized_blocks += row.count;
  consistency_.summarized_ns += moved;
  return moved;
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
  auto nothing_before = [](uint64_t) {};
  if (wakeups) {
    mergeByTime(nothing_before, timeStream(*wakeups, on_wakeup), timeStream(switches, on_switch));
  } else {
    mergeByTime(nothing_before, timeStream(switches, on_switch));
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
