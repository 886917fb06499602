// The executables a recording's targets run, for the Go probes and the
// goroutine-id layouts (one set of uprobes and one layout per distinct
// executable): `-- CMD`'s program found as execvp finds it, each `-p`
// process's /proc/PID/exe, and for -a and --cgroup every process running
// when recording starts (the cgroup's and its descendants' for --cgroup),
// one entry per executable file (device and inode) with the processes that
// run it. A program started later under -a or --cgroup is not among them.
//
//   for (const TargetExecutable& target : targetExecutables(config)) {
//     attach at target.path for target.pid (-1: any process running it);
//     target.pids: the processes known to run it now (empty for `-- CMD`)
//   }
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recorder/record_config.h"

namespace incise::recorder {

struct TargetExecutable {
  std::string path;
  int pid = -1;                // the one process to probe it in; -1: any
  std::vector<uint32_t> pids;  // -p, -a, --cgroup: the processes running it
};

std::vector<TargetExecutable> targetExecutables(const RecordConfig& config);

// Whether every process `target` was found running has exited since (false
// for `-- CMD`'s program, which no process runs yet): its executable may no
// longer be reachable, and is worth a count, not a note of its own.
bool targetExited(const TargetExecutable& target);

// Processes read per recording for -a and --cgroup: more are not looked at.
inline constexpr size_t kMaxScannedProcesses = 65536;

}  // namespace incise::recorder
