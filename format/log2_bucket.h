// The log2 bucket the `bucket` columns store (latency histograms, wait
// summaries) and the reports' log2 histograms use: bucket i holds the values
// v with floor(log2(v)) == i, [2^i, 2^(i+1)); 0 falls in bucket 0.
#pragma once

#include <bit>
#include <cstdint>

namespace incise::format {

inline uint64_t log2Bucket(uint64_t value) {
  return value == 0 ? 0 : static_cast<uint64_t>(std::bit_width(value) - 1);
}

}  // namespace incise::format
