#include "analyzer/analyses/distributions/log2_histogram.h"

#include "format/log2_bucket.h"

namespace incise::analyzer {

size_t log2Bucket(uint64_t value) {
  return static_cast<size_t>(format::log2Bucket(value));
}

}  // namespace incise::analyzer
