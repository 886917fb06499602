// ThreadStateMachine: replays scheduler switches and wake-ups per thread and
// says where each thread's time went, counting only what was observed.
//
// States and the events that move between them:
//   running  --switch-out, prev_state 0-->  runnable (preempted)
//   running  --switch-out, prev_state !0->  blocked (voluntary)
//   running  --switch-out, TASK_DEAD---->  ended (the thread exited)
//   blocked  --wake-up------------------->  runnable
//   runnable --switch-in----------------->  running
// A wake-up that arrives while the thread is still running (it raced with
// its own switch-out) makes the coming blocked switch-out runnable at once.
// Time before a thread's first event is not counted, except that a followed
// thread whose first event is a switch-out was running since the replay began
// (observeFrom). finish() charges the state each living thread is in to the
// end of the trace; an ended thread
// counts nothing more (a later event under its tid is a new life). Idle
// (tid 0) is skipped.
//
// Followed threads and bystanders (RecordedThreads): every switch of a
// followed thread is recorded, so its states are known between events. A
// bystander is seen only at the switches it shares with a followed thread;
// by default it is not counted at all. With include_bystanders it gets only
// what was seen of it: running from a switch-in to the switch-out that ends
// that run on the same CPU with no other recorded switch between them, and
// its switch counts; never a state extrapolated between sightings. So
//   - running + runnable + blocked of a thread <= its lifetime (first event
//     to exit or the end of the trace);
//   - the running time of all threads <= the trace's duration x CPUs, since
//     one CPU's running intervals never overlap.
//
// Two CPUs' clocks can disagree by a little: a thread switched out on one CPU
// and in on another may show its switch-in first. The machine takes the
// switch-in as the truth (the thread runs on the new CPU from then) and the
// late switch-out as a switch count only. What it cannot reconcile is
// counted in consistency(): a followed thread switched out while not
// running (its switch-in was not recorded: it is taken to have run from that
// CPU's previous recorded switch, an upper bound), or a thread that left a
// CPU unseen (another thread leaves it, or it is switched in again where it
// runs: its switch-out was not recorded, and that run is not counted). Some
// kernels never report switches away from a few of their own tasks, to any
// tracer; there the thread that ran next on that CPU shows a missing
// switch-in.
//
// Short sleeps the recorder summarised (--sched-min-block, format 2.7) leave
// halves of switch rows elided and some rows unwritten. An elided half is
// not a switch of its thread: the thread runs through the sleep, perhaps
// moving to another cpu, and addBlockSummary gives the sleep back. A row
// written after rows of its cpu were left out (switch_elided::kCpuRowsBefore)
// is not checked against the cpu's last written row, and its prev may have
// come in there unseen; so a switch the kernel did not report right before
// such a row is not counted.
//
// Spans go to callbacks as they close, so a report keeps only what it
// aggregates: a StateSpan is every interval counted into running, runnable
// or blocked (the timeline exports draw them; per thread they add up to the
// totals exactly); an OffCpuSpan is switch-out -> next switch-in (with the
// reason and the off-CPU stack taken at switch-out; finish() ends the ones
// still open at the end of the trace, so per thread they add up to runnable
// + blocked); a RunnableSpan is time
// waiting in a runqueue (wake-up or preemption -> switch-in). The latter two
// are given for followed threads only.
//
//   ThreadStateMachine machine(RecordedThreads::of(trace));
//   machine.on_off_cpu = [&](const OffCpuSpan& span) { blocked[span.stack_id] += span.duration();
//   };
//   replaySchedule(trace, Replay::kSwitchesAndWakeups, machine);   // streams, in time order
//   machine.finish(trace.endTime());
//   for (const auto& [tid, stats] : machine.threads()) ...
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/analyses/sched/recorded_threads.h"
#include "format/event_kinds.h"

namespace incise::analyzer {

class Trace;

enum class ThreadState { kRunning, kRunnable, kBlocked };
std::string_view threadStateName(ThreadState state);  // "running", "runnable", "blocked"

// The kernel's TASK_DEAD in a switch's prev_state: the thread's last switch-out.
inline constexpr uint64_t kTaskDead = 0x80;

struct StateSpan {
  uint32_t pid = 0;
  uint32_t tid = 0;
  ThreadState state = ThreadState::kRunning;
  uint64_t start = 0;
  uint64_t end = 0;
};

struct OffCpuSpan {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start = 0;  // switch-out
  uint64_t end = 0;    // next switch-in
  bool preempted = false;
  uint64_t prev_state = 0;
  uint64_t stack_id = 0;
  uint64_t goid = 0;  // Go programs: the goroutine the thread left (format 2.5); 0 = none
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
  bool bystander = false;   // seen only beside followed threads
  uint64_t first_time = 0;  // first event seen for the thread
  uint64_t exit_time = 0;   // its last switch-out (TASK_DEAD); 0 while it lives
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

  // `waits` runqueue waits of `total_ns` in all, the longest `max_ns`.
  void addRunqueueWaits(uint64_t waits, uint64_t total_ns, uint64_t max_ns) {
    runqueue_waits += waits;
    runqueue_total_ns += total_ns;
    runqueue_max_ns = std::max(runqueue_max_ns, max_ns);
  }
};

// Switches of followed threads that the replay could not reconcile.
struct ScheduleConsistency {
  uint64_t reordered_switches = 0;   // switch-in on a CPU before the switch-out on another
  uint64_t missing_switch_ins = 0;   // switched out while not running
  uint64_t missing_switch_outs = 0;  // switched in on the same CPU while running
  uint64_t bystanders = 0;           // threads seen only beside followed ones
  // Short blocks the recorder counted instead of writing (block summary rows)
  // moved from running into blocked or runnable by addBlockSummary.
  uint64_t summarized_blocks = 0;
  uint64_t summarized_ns = 0;
  uint64_t inconsistencies() const { return missing_switch_ins + missing_switch_outs; }
};

class ThreadStateMachine {
 public:
  explicit ThreadStateMachine(RecordedThreads recorded = {}, bool include_bystanders = false)
      : recorded_(std::move(recorded)), include_bystanders_(include_bystanders) {}

  // The replay sees every switch of followed threads from `time` on (the
  // trace's start, or the --time window's): a followed thread whose first
  // event is its switch-out was running from then. Without it, time before a
  // thread's first switch is not counted.
  void observeFrom(uint64_t time) { observed_from_ = time; }

  std::function<void(const StateSpan&)> on_state;
  std::function<void(const OffCpuSpan&)> on_off_cpu;
  std::function<void(const RunnableSpan&)> on_runnable;

  void onSwitch(const format::SchedSwitch& row);
  void onWakeup(const format::Wakeup& row);
  // Charges each living followed thread's current state up to `end`.
  void finish(uint64_t end);
  // After finish(): short blocks the recorder counted instead of writing
  // (--sched-min-block). Their halves were elided or their rows left out,
  // so the replay read them as running; their time moves to blocked (or
  // runnable, prev_state 0) and their switches and wake-ups are counted. No span is reported for
  // them: timelines still draw them as running. Returns the ns charged (0
  // for a thread the replay does not count; never more than it ran).
  uint64_t addBlockSummary(const format::BlockSummary& row);
  // Followed threads, and bystanders when they are included.
  const std::map<uint32_t, ThreadSchedStats>& threads() const { return stats_; }
  const ScheduleConsistency& consistency() const { return consistency_; }

 private:
  enum class State { kUnknown, kRunning, kRunnable, kBlocked, kEnded };
  struct Thread {
    State state = State::kUnknown;
    bool bystander = false;
    bool counted = true;  // false: a bystander left out
    uint64_t since = 0;
    bool after_preemption = false;
    bool woken_while_running = false;
    bool switched_out = false;  // an OffCpuSpan is open
    uint64_t out_time = 0;
    uint64_t out_state = 0;
    uint64_t out_stack = 0;
    uint64_t out_goid = 0;
    bool seen_switch = false;    // a switch of this life was seen
    bool woken_unknown = false;  // woken (at `since`) before its first switch
    int64_t cpu = -1;            // where it runs (or last ran)
    int64_t late_out_cpu = -1;   // a switch-out still to come from this cpu (clock skew)
  };
  struct CpuLast {
    uint64_t time = 0;
    uint32_t next_tid = 0;
  };
  Thread& thread(uint64_t tid, uint64_t pid, uint64_t time);
  // Adds [start, end) to the thread's `state` total and reports it as a StateSpan.
  void charge(uint32_t tid, ThreadState state, uint64_t start, uint64_t end);
  // `t` starts running on `cpu` at `time`: closes the state it waited in.
  void startRun(uint32_t tid, Thread& t, uint64_t time, int64_t cpu);
  void switchIn(const format::SchedSwitch& row);
  // next's switch-in that ends a summarised short sleep (switch_elided).
  void runThroughSwitchIn(const format::SchedSwitch& row);
  void switchOut(const format::SchedSwitch& row);

  RecordedThreads recorded_;
  bool include_bystanders_ = false;
  uint64_t observed_from_ = 0;
  std::unordered_map<uint32_t, Thread> threads_;
  std::map<uint32_t, ThreadSchedStats> stats_;
  std::unordered_map<uint64_t, CpuLast> cpus_;  // the last switch row seen per cpu
  ScheduleConsistency consistency_;
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
