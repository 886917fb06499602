// Poisson sampling of allocations by bytes, as tcmalloc and heapprofd do:
// each thread counts down a number of bytes drawn from an exponential
// distribution with mean N (INCISE_ALLOC_SAMPLE_BYTES); the allocation that
// crosses zero is sampled and a new countdown is drawn. An allocation of s
// bytes is then sampled with probability 1 - exp(-s/N) whatever came before
// it, so s / (1 - exp(-s/N)) bytes (its weight) is an unbiased estimate of
// the bytes it stands for: about N for a small block, s for a block far
// larger than N.
//
//   configureSampling(getenv(kSampleBytesVariable));    // once, at start-up
//   if (uint64_t weight = sampleAllocation(size)) report(block, size, weight);
//
// Thread-local state, no locks, no allocation: safe in early start-up and
// in signal handlers (a handler that interrupts a countdown update may have
// its bytes counted twice or not at all, a bias of one allocation).
#pragma once

#include <cstddef>
#include <cstdint>

namespace incise::preload {

// Set by the recorder in the recorded command's environment: the mean bytes
// between samples. Unset, allocations are not sampled at all.
inline constexpr char kSampleBytesVariable[] = "INCISE_ALLOC_SAMPLE_BYTES";
inline constexpr uint64_t kMinSampleBytes = 1;
inline constexpr uint64_t kMaxSampleBytes = uint64_t{1} << 30;

// Reads the variable's value (null: sampling stays off). A value that is not
// a number in [kMinSampleBytes, kMaxSampleBytes] turns sampling off with a
// message on stderr.
void configureSampling(const char* sample_bytes);
bool samplingEnabled();

// 0: not sampled; else the bytes this allocation of `size` stands for.
uint64_t sampleAllocation(size_t size);

// The weight of a sampled allocation of `size` bytes when the mean is
// `mean_bytes` (exposed for tests).
uint64_t sampleWeight(uint64_t size, uint64_t mean_bytes);

}  // namespace incise::preload
