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
//   if (config.lock_mode != LockMode::kOff || !config.lock_probes.empty())
//     sources.push_back(makeLockSource());
#pragma once

#include <memory>

#include "recorder/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeLockSource();

}  // namespace incise::recorder
