// Locks: every pthread lock call (mode `all`) and custom lock functions
// (--lock-probe), from the uprobes of bpf/locks.bpf.c, as format::LockInterval
// rows: one row per critical section (request, acquired, release), folding
// recursion into the outermost section. A futex wait inside a probed call
// (seen by the scheduler source at its blocking switch, through the shared
// `lock_calls` map, bpf/lock_calls.bpf.h) marks the call contended.
//
// Futex waits themselves (mode `contended`, the default, and waits outside
// probed calls in mode `all`: condition variables, joins) are recorded by the
// scheduler source (recorder/sources/sched_source.h), with no probe at all.
//
// A command started with libincise-preload.so has its libc lock calls
// recorded in process instead (recorder/sources/preload_lock_source.h):
// `probe_libc` is false then, and only --lock-probe functions are probed.
//
//   if (probe_libc || !config.lock_probes.empty())
//     sources.push_back(makeLockSource(lock_calls, probe_libc));
#pragma once

#include <memory>

#include "recorder/shared_map.h"
#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeLockSource(std::shared_ptr<SharedMap> lock_calls, bool probe_libc);

}  // namespace incise::recorder
