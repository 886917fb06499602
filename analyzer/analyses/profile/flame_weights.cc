#include "analyzer/analyses/profile/flame_weights.h"

#include <algorithm>
#include <array>
#include <functional>

#include "analyzer/analyses/alloc/alloc_profile.h"
#include "analyzer/analyses/locks/trace_wait_kinds.h"
#include "analyzer/analyses/sched/thread_states.h"
#include "analyzer/analyses/summaries/trace_summaries.h"

namespace incise::analyzer {
namespace {

// Where an event of thread `tid` at `time` adds its weight.
using WeightsOf = std::function<StackWeights&(uint64_t tid, uint64_t time)>;

void collectOnCpuInto(Trace& trace, const WeightsOf& weights_of, bool split,
                      std::vector<StackWeights>* counters) {
  constexpr size_t kCounterColumns = 4;  // counter0..counter3
  const bool by_period = !format::sampleEventIsClock(trace.header().options);
  format::ColumnSet columns = {format::CpuSampleColumn::pid, format::CpuSampleColumn::stack_id,
                               format::CpuSampleColumn::time, format::CpuSampleColumn::weight};
  if (split) columns = columns | format::ColumnSet{format::CpuSampleColumn::tid};
  size_t slots = 0;
  if (counters) {
    slots = std::min(trace.header().options.counters.size(), kCounterColumns);
    counters->assign(slots, StackWeights());
    columns = columns | format::ColumnSet{
                            format::CpuSampleColumn::counter0, format::CpuSampleColumn::counter1,
                            format::CpuSampleColumn::counter2, format::CpuSampleColumn::counter3};
  }
  trace.forEachRow<format::CpuSample>(
      [&](const format::CpuSample& sample) {
        const auto pid = static_cast<uint32_t>(sample.pid);
        weights_of(sample.tid, sample.time)
            .add(pid, sample.stack_id, sample.time, by_period ? sample.weight : 1);
        const std::array<uint64_t, kCounterColumns> counts = {sample.counter0, sample.counter1,
                                                              sample.counter2, sample.counter3};
        for (size_t c = 0; c < slots; ++c) {
          if (counts[c] != 0) (*counters)[c].add(pid, sample.stack_id, sample.time, counts[c]);
        }
      },
      columns);
}

void collectInto(Trace& trace, FlameWeighting weighting, const WeightsOf& weights_of, bool split) {
  switch (weighting) {
    case FlameWeighting::kOnCpu:
      collectOnCpuInto(trace, weights_of, split, nullptr);
      break;
    case FlameWeighting::kOffCpu: {
      ThreadStateMachine machine(RecordedThreads::of(trace));
      machine.on_off_cpu = [&](const OffCpuSpan& span) {
        if (span.preempted || !trace.passesEvent(span.pid, span.tid, span.start)) return;
        weights_of(span.tid, span.start).add(span.pid, span.stack_id, span.start, span.duration());
      };
      replaySchedule(trace, Replay::kSwitches, machine);
      machine.finish(std::min(trace.window().end, trace.endTime()));  // spans open at the end
      // Blocks shorter than --sched-min-block, counted by the recorder per stack.
      forEachBlockSummary(trace, [&](const format::BlockSummary& s) {
        if (s.prev_state != 0)
          weights_of(s.tid, s.time)
              .add(static_cast<uint32_t>(s.pid), s.stack_id, s.time, s.total_ns, s.count);
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
          weights_of(lock.tid, lock.time)
              .add(static_cast<uint32_t>(lock.pid), lock.stack_id, lock.time,
                   lock.acquired_time - lock.time);
        }
      });
      break;
    }
    case FlameWeighting::kAllocated:
    case FlameWeighting::kLive:
      break;  // per sampled block, in collectFlameWeights; not split by context
  }
}

}  // namespace

std::string flameUnit(const Trace& trace, FlameWeighting weighting) {
  if (weighting == FlameWeighting::kAllocated || weighting == FlameWeighting::kLive) return "bytes";
  if (weighting != FlameWeighting::kOnCpu) return "ns";
  const format::RecordOptions& options = trace.header().options;
  return format::sampleEventIsClock(options) ? "samples" : options.sample_event;
}

StackWeights collectOnCpuWeights(Trace& trace, std::vector<StackWeights>* counters) {
  StackWeights weights;
  collectOnCpuInto(
      trace, [&](uint64_t, uint64_t) -> StackWeights& { return weights; }, false, counters);
  return weights;
}

StackWeights collectFlameWeights(Trace& trace, FlameWeighting weighting) {
  if (weighting == FlameWeighting::kAllocated || weighting == FlameWeighting::kLive) {
    return allocStackWeights(collectAllocProfile(trace), weighting == FlameWeighting::kAllocated
                                                             ? AllocWeighting::kAllocated
                                                             : AllocWeighting::kLive);
  }
  StackWeights weights;
  collectInto(
      trace, weighting, [&](uint64_t, uint64_t) -> StackWeights& { return weights; }, false);
  return weights;
}

std::map<std::optional<uint64_t>, StackWeights> collectFlameWeightsByValue(
    Trace& trace, FlameWeighting weighting, const ContextTimeline& timeline) {
  std::map<std::optional<uint64_t>, StackWeights> by_value;
  collectInto(
      trace, weighting,
      [&](uint64_t tid, uint64_t time) -> StackWeights& {
        return by_value[timeline.valueAt(static_cast<uint32_t>(tid), time)];
      },
      true);
  return by_value;
}

FoldedStacks foldedStacks(const NamedStacks& stacks) {
  FoldedStacks folded;
  addFoldedStacks(folded, stacks, {});
  return folded;
}

void addFoldedStacks(FoldedStacks& into, const NamedStacks& stacks, std::string_view root) {
  for (const WeightedStack& stack : stacks)
    into.add(stack.root_first, stacks.names(), stack.weight, root);
}

}  // namespace incise::analyzer
