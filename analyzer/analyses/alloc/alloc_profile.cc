#include "analyzer/analyses/alloc/alloc_profile.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace incise::analyzer {
namespace {

struct BlockEvent {
  uint32_t pid = 0;
  uint64_t address = 0;
  uint64_t time = 0;
  bool is_free = false;
  size_t sample = 0;  // an allocation's index in the samples

  // Per block address in time order; at one time the allocation first (a
  // free at the same ns as its allocation is of that block).
  auto order() const { return std::tuple(pid, address, time, is_free); }
};

struct Sample {
  AllocStackKey key;
  uint64_t time = 0;
  uint64_t weight = 0;
  uint64_t milli = 0;
  bool freed = false;
};

// Thousandths of the allocations a sample stands for: weight / size, at
// least one (the sample itself), and bounded whatever a file claims.
uint64_t allocationsMilli(uint64_t weight, uint64_t size) {
  constexpr double kMaxMilli = 1e15;
  if (size == 0) return 1000;
  const double milli = static_cast<double>(weight) * 1000.0 / static_cast<double>(size);
  return milli < 1000.0 ? 1000 : static_cast<uint64_t>(std::min(milli, kMaxMilli));
}

// A sample's bytes as read, bounded (2^48: 256 TiB) so that sums of any
// file's rows stay far from overflowing.
constexpr uint64_t kMaxSampleWeight = uint64_t{1} << 48;

}  // namespace

void AllocTotals::add(const AllocTotals& other) {
  allocated_bytes += other.allocated_bytes;
  allocated_milli += other.allocated_milli;
  samples += other.samples;
  live_bytes += other.live_bytes;
  live_milli += other.live_milli;
  live_samples += other.live_samples;
  if (first_time == 0 || (other.first_time != 0 && other.first_time < first_time))
    first_time = other.first_time;
}

AllocProfile collectAllocProfile(Trace& trace) {
  AllocProfile profile;
  profile.sample_bytes = trace.header().options.alloc_sample_bytes;
  std::vector<Sample> samples;
  std::vector<BlockEvent> events;
  trace.forEachRow<format::Allocation>([&](const format::Allocation& row) {
    const auto pid = static_cast<uint32_t>(row.pid);
    events.push_back(
        {.pid = pid, .address = row.address, .time = row.time, .sample = samples.size()});
    samples.push_back(
        {.key = {pid, row.stack_id},
         .time = row.time,
         .weight = std::min(row.weight, kMaxSampleWeight),
         .milli = allocationsMilli(std::min(row.weight, kMaxSampleWeight), row.size)});
  });
  trace.forEachRow<format::Free>([&](const format::Free& row) {
    events.push_back({.pid = static_cast<uint32_t>(row.pid),
                      .address = row.address,
                      .time = row.time,
                      .is_free = true});
  });
  std::sort(events.begin(), events.end(),
            [](const BlockEvent& a, const BlockEvent& b) { return a.order() < b.order(); });
  // A free ends the block allocated last at its address before it.
  const BlockEvent* open = nullptr;
  for (const BlockEvent& event : events) {
    const bool same_block = open && open->pid == event.pid && open->address == event.address;
    if (!event.is_free) {
      open = &event;
    } else if (same_block) {
      samples[open->sample].freed = true;
      open = nullptr;
    } else {
      ++profile.unmatched_frees;
    }
  }
  for (const Sample& sample : samples) {
    AllocTotals& totals = profile.stacks[sample.key];
    if (totals.samples == 0) totals.first_time = sample.time;
    totals.allocated_bytes += sample.weight;
    totals.allocated_milli += sample.milli;
    ++totals.samples;
    if (!sample.freed) {
      totals.live_bytes += sample.weight;
      totals.live_milli += sample.milli;
      ++totals.live_samples;
    }
  }
  for (const auto& [key, totals] : profile.stacks) profile.total.add(totals);
  return profile;
}

StackWeights allocStackWeights(const AllocProfile& profile, AllocWeighting weighting) {
  StackWeights weights;
  for (const auto& [key, totals] : profile.stacks) {
    if (weighting == AllocWeighting::kAllocated) {
      weights.add(key.pid, key.stack_id, totals.first_time, totals.allocated_bytes, totals.samples);
    } else if (totals.live_samples != 0) {
      weights.add(key.pid, key.stack_id, totals.first_time, totals.live_bytes, totals.live_samples);
    }
  }
  return weights;
}

}  // namespace incise::analyzer
