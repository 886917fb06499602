#include "preload/sampled_blocks.h"

namespace incise::preload {

size_t SampledBlocks::bucketOf(uintptr_t address) {
  // Blocks are at least 16-byte aligned: the low bits carry nothing.
  const uint64_t hashed = (static_cast<uint64_t>(address) >> 4) * 0x9e3779b97f4a7c15ull;
  return static_cast<size_t>(hashed >> 51) % kBuckets;  // 13 bits: 8192 buckets
}

bool SampledBlocks::insert(const void* block) {
  const auto address = reinterpret_cast<uintptr_t>(block);
  const size_t index = bucketOf(address);
  std::atomic<uintptr_t>* bucket = &slots_[index * kSlotsPerBucket];
  for (size_t i = 0; i < kSlotsPerBucket; ++i) {
    uintptr_t empty = 0;
    if (bucket[i].load(std::memory_order_relaxed) == 0 &&
        bucket[i].compare_exchange_strong(empty, address, std::memory_order_acq_rel)) {
      // Counted before the block is handed to the program, so before its free.
      counts_[index].fetch_add(1, std::memory_order_release);
      live_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

bool SampledBlocks::erase(const void* block) {
  const auto address = reinterpret_cast<uintptr_t>(block);
  const size_t index = bucketOf(address);
  if (counts_[index].load(std::memory_order_acquire) == 0) return false;
  std::atomic<uintptr_t>* bucket = &slots_[index * kSlotsPerBucket];
  for (size_t i = 0; i < kSlotsPerBucket; ++i) {
    uintptr_t expected = address;
    if (bucket[i].load(std::memory_order_relaxed) == address &&
        bucket[i].compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) {
      counts_[index].fetch_sub(1, std::memory_order_relaxed);
      live_.fetch_sub(1, std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

SampledBlocks& sampledBlocks() {
  // Zero-initialised at load (constant initialisation: no guard, no constructor).
  static constinit SampledBlocks blocks{};
  return blocks;
}

}  // namespace incise::preload
