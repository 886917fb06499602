// What a flame graph weighs: on-CPU samples, blocked off-CPU time, or lock
// wait time — each summed per (pid, stack) while rows stream by.
//
//   on-CPU:  1 per CPU sample of a clock (cpu-clock, task-clock), at the
//            sample's stack; for any other sampling event (-e page-faults,
//            cycles) the sample's period: the events it stands for;
//   off-CPU: ns from a switch-out with prev_state != 0 (blocked, not
//            preempted) to the thread's next switch-in (or the end of the
//            trace), of threads the recorder followed, at the off-CPU
//            stack taken at switch-out;
//   locks:   ns from request to acquire (acquired_time - time), at the
//            acquire stack; intervals that never waited weigh nothing;
//   alloc:   bytes allocated (--alloc samples' weights), at the allocation
//            stack; live: of those, the bytes not freed by the end
//            (analyzer/analyses/alloc/alloc_profile.h).
//
// Split by a context (--by context:NAME), each event goes to the value its
// thread held at it: a sample's time, a switch-out (the value holds until
// the thread runs again), a lock request, a block summary's first block.
//
//   StackWeights weights = collectFlameWeights(trace, FlameWeighting::kOffCpu);
//   FoldedStacks folded = foldedStacks(weights.named(namer));
//   std::map<std::optional<uint64_t>, StackWeights> per_value =
//       collectFlameWeightsByValue(trace, FlameWeighting::kOnCpu, timeline);
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/analyses/profile/stack_weights.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/folded_stacks.h"

namespace incise::analyzer {

enum class FlameWeighting { kOnCpu, kOffCpu, kLocks, kAllocated, kLive };

// "samples", the sampling event's name ("page-faults": on-CPU weights are
// events), "ns" or "bytes".
std::string flameUnit(const Trace& trace, FlameWeighting weighting);
StackWeights collectFlameWeights(Trace& trace, FlameWeighting weighting);
// By value of `timeline`'s context (nullopt: unknown there).
std::map<std::optional<uint64_t>, StackWeights> collectFlameWeightsByValue(
    Trace& trace, FlameWeighting weighting, const ContextTimeline& timeline);
// The on-CPU weights; with `counters`, also each --counters counter's counts
// per stack (one StackWeights per counter the header names, at most 4), in
// the same pass over the samples.
StackWeights collectOnCpuWeights(Trace& trace, std::vector<StackWeights>* counters = nullptr);
// Named stacks as folded paths (text joined once per distinct path), added
// to `into` under `root` when it is not empty.
FoldedStacks foldedStacks(const NamedStacks& stacks);
void addFoldedStacks(FoldedStacks& into, const NamedStacks& stacks, std::string_view root);

}  // namespace incise::analyzer
