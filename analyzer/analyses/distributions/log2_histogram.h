// A log2 histogram of durations (or any uint64 values): bucket i holds the
// values v with floor(log2(v)) == i, so [2^i, 2^(i+1)) ns; 0 falls in bucket
// 0. The lock reports' hold times and the latency reports share it.
//
//   Log2Histogram h{};
//   ++h[log2Bucket(1'500'000)];   // bucket 20: [1.05 ms, 2.10 ms)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace incise::analyzer {

inline constexpr size_t kLog2Buckets = 64;
using Log2Histogram = std::array<uint64_t, kLog2Buckets>;
size_t log2Bucket(uint64_t value);

// The smallest value of bucket `bucket` and the first value past it.
inline uint64_t log2BucketStart(size_t bucket) {
  return bucket == 0 ? 0 : uint64_t{1} << bucket;
}
inline uint64_t log2BucketEnd(size_t bucket) {
  return bucket + 1 < kLog2Buckets ? uint64_t{1} << (bucket + 1) : UINT64_MAX;
}

}  // namespace incise::analyzer
