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
//   if (config.lock_mode == LockMode::kAll || !config.lock_probes.empty())
//     sources.push_back(makeLockSource(lock_calls));
#pragma once

#include <memory>

#include "recorder/shared_map.h"
#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeLockSource(std::shared_ptr<SharedMap> lock_calls);

}  // namespace incise::recorder
