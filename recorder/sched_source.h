// Scheduler and process life: sched_switch (with the off-CPU stack of the
// thread going off), wake-ups (with the waker's stack), fork, exec, exit and
// comm changes, from bpf/sched.bpf.c. With `emit_sched` false only process
// life is emitted (the program still follows forked children of targets).
// `wait_stacks` is the futex-wait user stack map it shares with the lock
// source (bpf/wait_stack.bpf.h).
//
//   auto wait_stacks = std::make_shared<SharedMap>("wait_user_stacks");
//   sources.push_back(makeSchedSource(config.sched, wait_stacks));
#pragma once

#include <memory>

#include "recorder/shared_map.h"
#include "recorder/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeSchedSource(bool emit_sched, std::shared_ptr<SharedMap> wait_stacks);

}  // namespace incise::recorder
