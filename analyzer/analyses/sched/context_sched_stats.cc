#include "analyzer/analyses/sched/context_sched_stats.h"

#include <algorithm>
#include <vector>

#include "analyzer/analyses/summaries/trace_summaries.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {
namespace {

uint64_t grew(uint64_t before, uint64_t after) {
  return after > before ? after - before : 0;
}

// Adds to `into` what the machine counted for one thread between `before`
// and `after` (one row, or one block summary), time moved from running included.
void addCounted(ThreadSchedStats& into, const ThreadSchedStats& before,
                const ThreadSchedStats& after) {
  into.voluntary_switches += grew(before.voluntary_switches, after.voluntary_switches);
  into.involuntary_switches += grew(before.involuntary_switches, after.involuntary_switches);
  into.migrations += grew(before.migrations, after.migrations);
  into.wakeups += grew(before.wakeups, after.wakeups);
  // A block summary moves time out of running.
  into.running_ns -= std::min(into.running_ns, grew(after.running_ns, before.running_ns));
}

class ContextSplitter {
 public:
  ContextSplitter(Trace& trace, const ThreadStateMachine& machine, const ContextTimeline* by)
      : trace_(trace), machine_(machine), by_(by) {}

  // The stats of `tid`'s value at `time`, or null when --where does not hold there.
  ThreadSchedStats* at(uint32_t tid, uint64_t time) {
    if (!trace_.passesContext(tid, time)) return nullptr;
    ContextSchedKey key{tid, contextKey(by_ ? by_->valueAt(tid, time) : std::nullopt)};
    auto [it, added] = stats_.try_emplace(key);
    ThreadSchedStats& stats = it->second;
    if (added || time < stats.first_time) stats.first_time = time;
    if (auto known = machine_.threads().find(tid); known != machine_.threads().end()) {
      stats.pid = known->second.pid;
      stats.bystander = known->second.bystander;
    }
    return &stats;
  }

  void onState(const StateSpan& span) {
    cuts_.clear();
    if (by_) by_->changesInside(span.tid, span.start, span.end, cuts_);
    for (const ContextTimeline& where : trace_.whereTimelines())
      where.changesInside(span.tid, span.start, span.end, cuts_);
    std::sort(cuts_.begin(), cuts_.end());
    cuts_.erase(std::unique(cuts_.begin(), cuts_.end()), cuts_.end());
    cuts_.push_back(span.end);
    uint64_t from = span.start;
    for (uint64_t to : cuts_) {
      if (ThreadSchedStats* stats = at(span.tid, from)) {
        (span.state == ThreadState::kRunning    ? stats->running_ns
         : span.state == ThreadState::kRunnable ? stats->runnable_ns
                                                : stats->blocked_ns) += to - from;
      }
      from = to;
    }
  }

  ThreadSchedStats before(uint64_t tid) const {
    auto found = machine_.threads().find(static_cast<uint32_t>(tid));
    return found == machine_.threads().end() ? ThreadSchedStats{} : found->second;
  }
  // What the machine counted for `tid` since `earlier`, charged to its value at `time`.
  void counted(uint64_t tid, const ThreadSchedStats& earlier, uint64_t time) {
    auto found = machine_.threads().find(static_cast<uint32_t>(tid));
    if (found == machine_.threads().end()) return;
    if (ThreadSchedStats* stats = at(static_cast<uint32_t>(tid), time))
      addCounted(*stats, earlier, found->second);
  }

  ContextSchedStats take() { return std::move(stats_); }

 private:
  Trace& trace_;
  const ThreadStateMachine& machine_;
  const ContextTimeline* by_;
  std::vector<uint64_t> cuts_;
  ContextSchedStats stats_;
};

}  // namespace

ContextSchedStats replayScheduleByContext(Trace& trace, ThreadStateMachine& machine,
                                          const ContextTimeline* by) {
  ContextSplitter splitter(trace, machine, by);
  machine.on_state = [&](const StateSpan& span) { splitter.onState(span); };
  machine.observeFrom(std::max(trace.window().start, trace.startTime()));
  forEachScheduleEvent(
      trace, Replay::kSwitchesAndWakeups,
      [&](const format::SchedSwitch& row) {
        const ThreadSchedStats prev = splitter.before(row.prev_tid);
        const ThreadSchedStats next = splitter.before(row.next_tid);
        machine.onSwitch(row);
        if (row.prev_tid != 0) splitter.counted(row.prev_tid, prev, row.time);
        if (row.next_tid != 0 && row.next_tid != row.prev_tid)
          splitter.counted(row.next_tid, next, row.time);
      },
      [&](const format::Wakeup& row) {
        const ThreadSchedStats wakee = splitter.before(row.wakee_tid);
        machine.onWakeup(row);
        splitter.counted(row.wakee_tid, wakee, row.time);
      });
  machine.finish(std::min(trace.window().end, trace.endTime()));
  forEachBlockSummary(trace, [&](const format::BlockSummary& summary) {
    const ThreadSchedStats thread = splitter.before(summary.tid);
    const uint64_t moved = machine.addBlockSummary(summary);
    if (moved == 0) return;
    splitter.counted(summary.tid, thread, summary.time);
    if (ThreadSchedStats* stats = splitter.at(static_cast<uint32_t>(summary.tid), summary.time))
      (summary.prev_state == 0 ? stats->runnable_ns : stats->blocked_ns) += moved;
  });
  machine.on_state = nullptr;
  return splitter.take();
}

}  // namespace incise::analyzer
