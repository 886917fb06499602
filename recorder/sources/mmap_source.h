// Mmap records: the kernel's own account of what every followed process
// maps, from the moment recording begins — PERF_RECORD_MMAP2 (executable
// mappings only, with the build-id on 5.12+), exec (PERF_RECORD_COMM with
// the exec flag) and fork records of a software dummy event, one per CPU,
// as perf record takes them. They feed ProcessTracker's MappingTable, so a
// library loaded 1 ms before its process exits still resolves, where a
// /proc/PID/maps read races the dynamic loader.
//
// Which tasks the events watch:
//   -- CMD     the command's task with inherit (its whole tree, filtered by
//              the kernel: nothing of other processes crosses into the ring)
//   --cgroup   the cgroup (PERF_FLAG_PID_CGROUP; the kernel filters)
//   -a, -p     every task (one event per CPU); -p keeps only the targets
//              and their children, in the recorder
//
//   sources.push_back(makeMmapSource());   // recorder/sources/source_list.cc
#pragma once

#include <memory>

#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeMmapSource();

}  // namespace incise::recorder
