// Sampled allocations (--alloc): uprobes on the marker functions of
// libincise-preload.so (preload/alloc_markers.h), which samples the
// program's allocations in process (one every --alloc-rate bytes on
// average) and calls them only for sampled allocations and the frees of
// sampled blocks; bpf/alloc.bpf.c sends those with the allocation's user
// stack, as format::Allocation and format::Free rows.
//
// The library must be in the process: `-- CMD` is started with it
// (INCISE_ALLOC_SAMPLE_BYTES in its environment turns sampling on), a `-p`
// process must have loaded it itself (else the recording stops, saying how
// to start it), and under -a or --cgroup the processes that run the
// library beside the recorder are sampled.
//
//   if (config.alloc_sample_bytes != 0) sources.push_back(makeAllocSource());
#pragma once

#include <memory>

#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeAllocSource();

}  // namespace incise::recorder
