// Scheduler and process life: sched_switch (with the off-CPU stack of the
// thread going off), wake-ups (with the waker's stack), fork, exec, exit and
// comm changes, from bpf/sched.bpf.c. With `emit_sched` false only process
// life is emitted (the program still follows forked children of targets).
//
// With a lock mode on it also records futex waits: each switch where a
// thread blocks in futex(2), its wake-up and its next switch-in become one
// lock row (recorder/sources/futex_wait_rows.h), also under --no-sched, where the
// BPF side then sends only those three. `lock_calls` is the map of lock
// calls in progress shared with the lock source (bpf/lock_calls.bpf.h): a
// wait inside a probed call is the call's, not a row of its own.
//
//   auto lock_calls = std::make_shared<SharedMap>("pending_calls");
//   sources.push_back(makeSchedSource(config.sched, lock_calls));
#pragma once

#include <memory>

#include "recorder/shared_map.h"
#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeSchedSource(bool emit_sched, std::shared_ptr<SharedMap> lock_calls);

}  // namespace incise::recorder
