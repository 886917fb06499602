#include "analyzer/analyses/profile/flame_weights.h"

#include <algorithm>

#include "analyzer/analyses/locks/trace_wait_kinds.h"
#include "analyzer/analyses/sched/block_summaries.h"
#include "analyzer/analyses/sched/thread_states.h"

namespace incise::analyzer {

std::string flameUnit(FlameWeighting weighting) {
  return weighting == FlameWeighting::kOnCpu ? "samples" : "ns";
}

StackWeights collectFlameWeights(Trace& trace, FlameWeighting weighting) {
  StackWeights weights;
  switch (weighting) {
    case FlameWeighting::kOnCpu:
      trace.forEachRow<format::CpuSample>(
          [&](const format::CpuSample& sample) {
            weights.add(static_cast<uint32_t>(sample.pid), sample.stack_id, sample.time, 1);
          },
          {format::CpuSampleColumn::pid, format::CpuSampleColumn::stack_id,
           format::CpuSampleColumn::time});
      break;
    case FlameWeighting::kOffCpu: {
      ThreadStateMachine machine(RecordedThreads::of(trace));
      machine.on_off_cpu = [&](const OffCpuSpan& span) {
        if (span.preempted || !trace.passesEvent(span.pid, span.tid, span.start)) return;
        weights.add(span.pid, span.stack_id, span.start, span.duration());
      };
      replaySchedule(trace, Replay::kSwitches, machine);
      machine.finish(std::min(trace.window().end, trace.endTime()));  // spans open at the end
      // Blocks shorter than --sched-min-block, counted by the recorder per stack.
      forEachBlockSummary(trace, [&](const format::BlockSummary& s) {
        if (s.prev_state != 0)
          weights.add(static_cast<uint32_t>(s.pid), s.stack_id, s.time, s.total_ns, s.count);
      });
      break;
    }
    case FlameWeighting::kLocks: {
      // Lock waits only, decided as `incise locks` decides them: a park
      // (Go's idle Ms in notesleep), join, condvar or semaphore wait is not
      // lock wait time.
      WaitClassifier classifier(trace);
      trace.forEachRow<format::LockInterval>([&](const format::LockInterval& lock) {
        if (lock.acquired_time > lock.time && isLockKind(classifier.classify(lock).kind)) {
          weights.add(static_cast<uint32_t>(lock.pid), lock.stack_id, lock.time,
                      lock.acquired_time - lock.time);
        }
      });
      break;
    }
  }
  return weights;
}

FoldedStacks foldedStacks(const NamedStacks& stacks) {
  FoldedStacks folded;
  for (const WeightedStack& stack : stacks)
    folded.add(stack.root_first, stacks.names(), stack.weight);
  return folded;
}

}  // namespace incise::analyzer
