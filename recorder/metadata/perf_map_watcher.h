// PerfMapWatcher: copies JIT perf maps (/tmp/perf-PID.map) of recorded
// processes into the trace while recording. About once a second the lines
// added since the last read become a format::PerfMapSnapshot stamped with the
// time they were seen, so an address the JIT reuses maps to the right name
// at each moment. The file is read through /proc/PID/root with the pid the
// process has in its own namespace, so JITs in containers are found; it is the
// target's file, so it is opened inside that root (no link leads out), only
// as a regular file (never a FIFO that would block), at most 16 MiB a poll.
//
//   PerfMapWatcher watcher;
//   watcher.poll(tracker.knownPids(), now, delta.perf_maps);   // each second and at the end
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/metadata.h"

namespace incise::recorder {

class PerfMapWatcher {
 public:
  explicit PerfMapWatcher(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  // `pids` sorted (ProcessTracker::knownPids); the read position of a pid no
  // longer listed is forgotten, so exited processes leave no state behind.
  void poll(const std::vector<uint32_t>& pids, uint64_t time,
            std::vector<format::PerfMapSnapshot>& out);
  uint64_t entriesSeen() const { return entries_seen_; }
  size_t watchedPids() const { return consumed_bytes_.size(); }

 private:
  // The map's path inside the process's root: tmp/perf-NSPID.map.
  std::string mapNameOf(uint32_t pid) const;

  std::string proc_root_;
  std::unordered_map<uint32_t, uint64_t> consumed_bytes_;  // per pid
  uint64_t entries_seen_ = 0;
};

}  // namespace incise::recorder
