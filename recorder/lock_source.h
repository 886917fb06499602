// Locks: contended futex waits (mode `contended`, the default), every pthread
// lock call (mode `all`), and custom lock functions (--lock-probe), from
// bpf/locks.bpf.c, as format::LockInterval rows.
//
// - contended: futex syscall tracepoints only. One row per futex wait of a
//   target thread: time = wait start, acquired_time = wait end,
//   release_time = 0, address = the futex word (the mutex itself for a
//   pthread mutex), kind kFutex, flags kLockContended | kLockContendedOnly,
//   releaser_tid = the thread that last released (FUTEX_WAKE) that word.
// - all: uprobes on the target's libc lock/unlock functions; one row per
//   critical section (request, acquired, release), folding recursion into
//   the outermost section. Futex waits inside a probed call mark it
//   contended instead of becoming rows; other futex waits (condition
//   variables, joins) still become kFutex rows.
//
// A futex wait's user stack is walked once at its entry and reused by the
// wait's row and the scheduler's blocking switch: `wait_stacks` is the map
// shared with the scheduler source (bpf/wait_stack.bpf.h).
//
//   if (config.lock_mode != LockMode::kOff || !config.lock_probes.empty())
//     sources.push_back(makeLockSource(wait_stacks));
#pragma once

#include <memory>

#include "recorder/shared_map.h"
#include "recorder/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeLockSource(std::shared_ptr<SharedMap> wait_stacks);

}  // namespace incise::recorder
