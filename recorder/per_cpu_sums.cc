#include "recorder/per_cpu_sums.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <numeric>

namespace incise::recorder {

std::vector<uint64_t> sumPerCpuSlots(int map_fd, uint32_t slots) {
  std::vector<uint64_t> sums(slots, 0);
  int cpus = libbpf_num_possible_cpus();
  if (map_fd < 0 || cpus <= 0) return sums;
  // A per-CPU lookup returns one 8-byte-aligned value per possible CPU.
  std::vector<uint64_t> per_cpu(static_cast<size_t>(cpus));
  for (uint32_t slot = 0; slot < slots; ++slot) {
    if (bpf_map_lookup_elem(map_fd, &slot, per_cpu.data()) != 0) continue;
    sums[slot] = std::accumulate(per_cpu.begin(), per_cpu.end(), uint64_t{0});
  }
  return sums;
}

}  // namespace incise::recorder
