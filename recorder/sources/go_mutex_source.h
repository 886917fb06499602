// Go sync.Mutex contention: uprobes on the slow paths of the target's Go
// binary (recorder/probes/go_mutex_probes.h finds them, bpf/go_mutex.bpf.c runs
// them), one format::LockInterval row per contended acquisition: kind
// mutex, request = lockSlow's entry, acquired = its return, releaser = the
// thread whose unlockSlow handed the mutex on, and the goroutine ids of the
// waiter and the releaser (read at the goid offset of the binary's DWARF,
// recorder/probes/go_goid_offset.h). The fast paths (an
// uncontended Lock or Unlock, inlined into the caller) are not probed.
//
// Go parks a goroutine that waits for a mutex on the runtime's semaphore,
// without a futex wait of its own, so the scheduler source never sees these
// waits. Recorded whenever locks are (`--locks contended` or `all`) and the
// target is a Go program: the `-- CMD` binary, or each `-p` process's
// executable. With -a or --cgroup there is no one binary, and nothing is
// probed.
//
//   if (config.lock_mode != LockMode::kOff) sources.push_back(makeGoMutexSource());
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "recorder/record_config.h"
#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeGoMutexSource();

// The executables of the recording's targets, with the pid to probe each in
// (-1: any process running it): `-- CMD`'s program found as execvp finds it,
// each `-p` process's /proc/PID/exe. Empty for -a and --cgroup.
struct TargetExecutable {
  std::string path;
  int pid = -1;
};
std::vector<TargetExecutable> targetExecutables(const RecordConfig& config);

}  // namespace incise::recorder
