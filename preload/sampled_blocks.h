// The blocks whose allocation was sampled and that are not freed yet, so
// that the free of one is reported and any other free costs a lookup: a
// fixed table of 8192 buckets of 16 slots (1 MiB of zeroed memory, touched
// as it is used), lock-free, allocating nothing.
//
//   if (sampledBlocks().insert(block)) incise_alloc_sampled(...);
//   if (sampledBlocks().erase(block)) incise_free_sampled(block);
//
// A block hashes to one bucket, which fits two cache lines: a lookup reads
// them whole (a slot is 0 or a block's address), so no tombstones build up
// as blocks come and go. Each bucket's count of blocks sits in an 8 KiB
// array that stays in cache: the free of a block whose bucket is empty (most
// frees, as sampled blocks are few) reads one byte of it and nothing else. A sampled block whose
// bucket is full is not remembered (insert says so, and the sample is dropped): that takes 16 live
// sampled blocks hashed to one bucket; with 32,768 of them (16 GiB of live heap at the default mean
// of 512 KiB) about 0.02 buckets are full. Fork keeps the table (the child's blocks are the
// parent's copies); exec starts a new one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace incise::preload {

class SampledBlocks {
 public:
  static constexpr size_t kBuckets = 8192;
  static constexpr size_t kSlotsPerBucket = 16;

  // false: the block's bucket is full; the block is not remembered.
  bool insert(const void* block);
  // true: `block` was a remembered sampled block, and is forgotten now.
  bool erase(const void* block);
  // Blocks remembered now.
  uint64_t size() const { return live_.load(std::memory_order_relaxed); }

 private:
  static size_t bucketOf(uintptr_t address);

  alignas(64) std::atomic<uintptr_t> slots_[kBuckets * kSlotsPerBucket];
  alignas(64) std::atomic<uint8_t> counts_[kBuckets];  // blocks in each bucket
  std::atomic<uint64_t> live_;
};

// The process's table (static storage: usable before any constructor runs).
SampledBlocks& sampledBlocks();

}  // namespace incise::preload
