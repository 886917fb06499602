// The slots of a per-CPU BPF array of counters, summed over the possible
// CPUs: what the programs count (drops, walk ends, stack reuse) as one total
// per slot. A slot that cannot be read sums to 0.
//
//   std::vector<uint64_t> drops = sumPerCpuSlots(bpf_map__fd(skel->maps.drops), LOST_SOURCE_SLOTS);
#pragma once

#include <cstdint>
#include <vector>

namespace incise::recorder {

std::vector<uint64_t> sumPerCpuSlots(int map_fd, uint32_t slots);

}  // namespace incise::recorder
