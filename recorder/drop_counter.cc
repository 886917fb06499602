#include "recorder/drop_counter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <numeric>

#include "bpf/events.h"
#include "recorder/event_sink.h"
#include "recorder/per_cpu_sums.h"

namespace incise::recorder {

DropCounter::DropCounter(const bpf_map* drops) : DropCounter(bpf_map__fd(drops)) {}

DropCounter::DropCounter(int drops_fd) : map_fd_(drops_fd), reported_(LOST_SOURCE_SLOTS, 0) {}

void DropCounter::poll(EventSink& sink) {
  if (map_fd_ < 0) return;
  const std::vector<uint64_t> sums = sumPerCpuSlots(map_fd_, LOST_SOURCE_SLOTS);
  for (uint32_t slot = 1; slot < LOST_SOURCE_SLOTS; ++slot) {
    const uint64_t sum = sums[slot];
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
