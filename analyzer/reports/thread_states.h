// ThreadStateMachine: replays scheduler switches and wake-ups per thread and
// says where each thread's time went.
//
// States and the events that move between them:
//   running  --switch-out, prev_state 0-->  runnable (preempted)
//   running  --switch-out, prev_state !0->  blocked (voluntary)
//   blocked  --wake-up------------------->  runnable
//   runnable --switch-in----------------->  running
// A wake-up that arrives while the thread is still running (it raced with
// its own switch-out) makes the coming blocked switch-out runnable at once.
// Time before a thread's first event is not counted; finish() charges the
// state each thread is in to the end of the trace. Idle (tid 0) is skipped.
//
// Spans go to callbacks as they close, so a report keeps only what it
// aggregates: an OffCpuSpan is switch-out -> next switch-in (with the reason
// and the off-CPU stack taken at switch-out); a RunnableSpan is time waiting
// in a runqueue (wake-up or preemption -> switch-in).
//
//   ThreadStateMachine machine;
//   machine.on_off_cpu = [&](const OffCpuSpan& span) { blocked[span.stack_id] += span.duration();
//   };
//   replaySchedule(trace, Replay::kSwitchesAndWakeups, machine);   // streams, in time order
//   machine.finish(trace.endTime());
//   for (const auto& [tid, stats] : machine.threads()) ...
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "format/event_kinds.h"

namespace incise::analyzer {

class Trace;

struct OffCpuSpan {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start = 0;  // switch-out
  uint64_t end = 0;    // next switch-in
  bool preempted = false;
  uint64_t prev_state = 0;
  uint64_t stack_id = 0;
  uint64_t duration() const { return end - start; }
};

struct RunnableSpan {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start = 0;  // wake-up or preemption
  uint64_t end = 0;    // switch-in
  bool after_preemption = false;
  uint64_t duration() const { return end - start; }
};

struct ThreadSchedStats {
  uint32_t pid = 0;
  uint64_t first_time = 0;  // first event seen for the thread
  uint64_t running_ns = 0;
  uint64_t runnable_ns = 0;
  uint64_t blocked_ns = 0;
  uint64_t voluntary_switches = 0;    // switched out blocked (prev_state != 0)
  uint64_t involuntary_switches = 0;  // switched out preempted (prev_state 0)
  uint64_t migrations = 0;            // switch-in on another cpu than the previous one
  uint64_t wakeups = 0;
  uint64_t runqueue_waits = 0;  // closed RunnableSpans
  uint64_t runqueue_total_ns = 0;
  uint64_t runqueue_max_ns = 0;
};

class ThreadStateMachine {
 public:
  std::function<void(const OffCpuSpan&)> on_off_cpu;
  std::function<void(const RunnableSpan&)> on_runnable;

  void onSwitch(const format::SchedSwitch& row);
  void onWakeup(const format::Wakeup& row);
  // Charges each thread's current state up to `end`.
  void finish(uint64_t end);
  const std::map<uint32_t, ThreadSchedStats>& threads() const { return stats_; }

 private:
  enum class State { kUnknown, kRunning, kRunnable, kBlocked };
  struct Thread {
    State state = State::kUnknown;
    uint64_t since = 0;
    bool after_preemption = false;
    bool woken_while_running = false;
    bool switched_out = false;  // an OffCpuSpan is open
    uint64_t out_time = 0;
    uint64_t out_state = 0;
    uint64_t out_stack = 0;
    int64_t last_cpu = -1;
  };
  std::pair<Thread&, ThreadSchedStats&> thread(uint64_t tid, uint64_t pid, uint64_t time);
  void switchIn(uint32_t tid, uint32_t pid, uint64_t time, uint64_t cpu);
  void switchOut(const format::SchedSwitch& row);

  std::map<uint32_t, Thread> threads_;
  std::map<uint32_t, ThreadSchedStats> stats_;
};

// Feeds both lists (each sorted by time) to `machine` merged by time; on a
// tie the wake-up goes first (a thread is woken before it can run).
void replaySchedule(const std::vector<format::SchedSwitch>& switches,
                    const std::vector<format::Wakeup>& wakeups, ThreadStateMachine& machine);

// The same merge over the trace's rows that pass its filter, streamed in time
// order (TimeOrderedRows: memory is the chunks overlapping the current time,
// not the rows). Switch-out -> switch-in spans need no wake-ups: kSwitches
// does not read them.
enum class Replay { kSwitches, kSwitchesAndWakeups };
void replaySchedule(Trace& trace, Replay what, ThreadStateMachine& machine);

// The two merges above, handing each row to a callback instead of a machine
// (for replays that look at the machine between rows).
using OnSwitch = std::function<void(const format::SchedSwitch&)>;
using OnWakeup = std::function<void(const format::Wakeup&)>;
void forEachScheduleEvent(const std::vector<format::SchedSwitch>& switches,
                          const std::vector<format::Wakeup>& wakeups, const OnSwitch& on_switch,
                          const OnWakeup& on_wakeup);
void forEachScheduleEvent(Trace& trace, Replay what, const OnSwitch& on_switch,
                          const OnWakeup& on_wakeup);

}  // namespace incise::analyzer
