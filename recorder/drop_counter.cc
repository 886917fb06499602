#include "recorder/drop_counter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <numeric>

#include "bpf/events.h"
#include "recorder/event_sink.h"

namespace incise::recorder {

DropCounter::DropCounter(const bpf_map* drops)
    : map_fd_(bpf_map__fd(drops)), reported_(LOST_SOURCE_SLOTS, 0) {}

void DropCounter::poll(EventSink& sink) {
  if (map_fd_ < 0) return;
  int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return;
  // A per-CPU lookup returns one 8-byte-aligned value per possible CPU.
  std::vector<uint64_t> per_cpu(static_cast<size_t>(cpus));
  for (uint32_t slot = 1; slot < LOST_SOURCE_SLOTS; ++slot) {
    if (bpf_map_lookup_elem(map_fd_, &slot, per_cpu.data()) != 0) continue;
    uint64_t sum = std::accumulate(per_cpu.begin(), per_cpu.end(), uint64_t{0});
    if (sum > reported_[slot]) {
      sink.noteLost(static_cast<format::LostSource>(slot), sum - reported_[slot]);
      reported_[slot] = sum;
    }
  }
}

uint64_t DropCounter::total() const {
  return std::accumulate(reported_.begin(), reported_.end(), uint64_t{0});
}

}  // namespace incise::recorder
