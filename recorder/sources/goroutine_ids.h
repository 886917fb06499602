// Goroutine ids on CPU samples: which targets are Go programs and where
// their threads keep the current goroutine, for bpf/goroutine.bpf.h.
//
// A Go thread's current g sits at a fixed offset from its FS base
// (runtime.tlsg). That offset is read from the binary's own code, the way
// the runtime reads it: runtime.stackcheck starts by loading g from it
// (`mov %fs:-8,%rax`, or in position-independent binaries `mov $-8,%rcx;
// mov %fs:(%rcx),%rax`). The goid's offset in runtime.g comes from the
// binary's DWARF (recorder/probes/go_goid_offset.h), with those of m in
// runtime.g and curg in runtime.m, for a thread on its g0 or signal g.
// Targets are the executables targetExecutables names
// (recorder/probes/go_target_executables.h), as for the Go mutex probes:
// the `-- CMD` program, the `-p` processes', and under -a or --cgroup those
// of the processes running when recording starts and of each process that
// execs a Go program later. The layout is read once per executable file and
// shared by every source that asks.
//
//   GoroutineIds ids = findGoroutineIds(config, filter.pids());
//   skel->rodata->go_targets = !ids.processes.empty();
//   ... load ...
//   if (Status s = ids.fill(bpf_map__fd(skel->maps.go_processes)); !s) return s;
//   for (const std::string& note : ids.notes) sink.addNote(note);
//   if (goProgramsMayStart(config)) followGoPrograms(sink.processes(), fd);
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "bpf/goroutine.h"
#include "recorder/metadata/process_tracker.h"
#include "recorder/record_config.h"

namespace incise::recorder {

// The g slot's offset from the FS base that runtime.stackcheck's first
// instructions load g from; nullopt when they are not one of the forms
// above.
std::optional<int64_t> tlsGOffset(std::span<const uint8_t> code);

// nullopt: not a Go program (no runtime.stackcheck). An error: a Go program
// whose layout could not be read (the message says why). Read once per
// file (device, inode, modification time); later calls return that.
Result<std::optional<go_process>> goThreadLayout(const std::string& binary);

struct GoroutineIds {
  std::vector<std::pair<uint32_t, go_process>> processes;  // by pid
  std::vector<std::string> notes;                          // Go targets left without ids
  // Puts every process into the BPF map `go_processes`.
  Status fill(int map_fd) const;
};

// `pids`: the recording's target processes (the command's child for `-- CMD`).
GoroutineIds findGoroutineIds(const RecordConfig& config, const std::vector<uint32_t>& pids);

// Whether a Go program may start while recording (-a, --cgroup): then
// `go_targets` is on from the start and each exec asks goroutineIdsOnExec.
bool goProgramsMayStart(const RecordConfig& config);

// After `pid` execs: puts it into `map_fd` when its new image is a Go
// program, takes it out otherwise. Past MAX_GO_PROCESSES entries a new Go
// program alive at once gets no goroutine ids.
void goroutineIdsOnExec(int map_fd, uint32_t pid);

// Follows the recording's execs and exits in `map_fd`, the BPF map
// `go_processes`: an exited process's entry goes, making room for new ones.
void followGoPrograms(ProcessTracker& processes, int map_fd);

}  // namespace incise::recorder
