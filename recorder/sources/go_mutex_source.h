// Go sync.Mutex contention: uprobes on the slow paths of the target's Go
// binary (recorder/probes/go_mutex_probes.h finds them, bpf/go_mutex.bpf.c runs
// them), one format::LockInterval row per contended acquisition: kind
// mutex, request = lockSlow's entry, acquired = its return, releaser = the
// thread whose unlockSlow handed the mutex on, and the goroutine ids of the
// waiter and the releaser (read at the goid offset of the binary's DWARF,
// recorder/probes/go_goid_offset.h). The fast paths (an
// uncontended Lock or Unlock, inlined into the caller) are not probed.
// sync.RWMutex waits (a reader behind a writer, a writer behind readers)
// and sync.Cond waits come through the runtime functions the goroutine
// parks in (recorder/probes/go_wait_probes.h): rwlock-read, rwlock-write
// and condvar rows at the RWMutex or Cond, released by the goroutine whose
// unlock or signal woke the waiter.
//
// Go parks a goroutine that waits for a mutex on the runtime's semaphore,
// without a futex wait of its own, so the scheduler source never sees these
// waits. Recorded whenever locks are (`--locks contended` or `all`) and a
// target runs a Go program (recorder/probes/go_target_executables.h): the
// `-- CMD` binary, each `-p` process's executable, and under -a or
// --cgroup each distinct Go executable running when recording starts and,
// through `attacher`, each one first exec'd later (at most 64 of them and
// 512 probes; a note in the trace counts those past it). The programs are loaded at
// start under -a and --cgroup even when no Go program runs yet.
//
//   sources.push_back(makeGoMutexSource(attacher));  // null: follow no execs
#pragma once

#include <memory>

#include "recorder/probes/go_target_executables.h"
#include "recorder/sources/source.h"

namespace incise::recorder {

class UprobeAttacher;

std::unique_ptr<Source> makeGoMutexSource(UprobeAttacher* attacher);

}  // namespace incise::recorder
