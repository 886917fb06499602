// What a flame graph weighs: on-CPU samples, blocked off-CPU time, or lock
// wait time — each summed per (pid, stack) while rows stream by.
//
//   on-CPU:  1 per CPU sample, at the sample's stack;
//   off-CPU: ns from a switch-out with prev_state != 0 (blocked, not
//            preempted) to the thread's next switch-in (or the end of the
//            trace), of threads the recorder followed, at the off-CPU
//            stack taken at switch-out;
//   locks:   ns from request to acquire (acquired_time - time), at the
//            acquire stack; intervals that never waited weigh nothing.
//
//   StackWeights weights = collectFlameWeights(trace, FlameWeighting::kOffCpu);
//   FoldedStacks folded = foldedStacks(weights.named(namer));
#pragma once

#include <string>

#include "analyzer/analyses/profile/stack_weights.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/folded_stacks.h"

namespace incise::analyzer {

enum class FlameWeighting { kOnCpu, kOffCpu, kLocks };

std::string flameUnit(FlameWeighting weighting);  // "samples" or "ns"
StackWeights collectFlameWeights(Trace& trace, FlameWeighting weighting);
// Named stacks as folded paths (text joined once per distinct path).
FoldedStacks foldedStacks(const NamedStacks& stacks);

}  // namespace incise::analyzer
