#include "analyzer/analyses/distributions/log2_histogram.h"

#include <bit>

namespace incise::analyzer {

size_t log2Bucket(uint64_t value) {
  return value == 0 ? 0 : std::bit_width(value) - 1;
}

}  // namespace incise::analyzer
