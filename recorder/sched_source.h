// Scheduler and process life: sched_switch (with the off-CPU stack of the
// thread going off), wake-ups (with the waker's stack), fork, exec, exit and
// comm changes, from bpf/sched.bpf.c. With `emit_sched` false only process
// life is emitted (the program still follows forked children of targets).
//
//   sources.push_back(makeSchedSource(config.sched));
#pragma once

#include <memory>

#include "recorder/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeSchedSource(bool emit_sched);

}  // namespace incise::recorder
