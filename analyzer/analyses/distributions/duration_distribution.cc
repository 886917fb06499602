#include "analyzer/analyses/distributions/duration_distribution.h"

#include <algorithm>
#include <bit>

namespace incise::analyzer {
namespace {

constexpr uint64_t kSubBuckets = uint64_t{1} << DurationDistribution::kSubBucketBits;

// ceil(percent / 100 * count), at least 1: the 1-based nearest rank.
uint64_t nearestRank(uint64_t percent, uint64_t count) {
  return std::max<uint64_t>((percent * count + 99) / 100, 1);
}

}  // namespace

size_t DurationDistribution::bucketOf(uint64_t value) {
  if (value < kSubBuckets) return value;
  unsigned power = std::bit_width(value) - 1;  // >= kSubBucketBits
  unsigned shift = power - kSubBucketBits;
  return kSubBuckets + shift * kSubBuckets + ((value >> shift) - kSubBuckets);
}

uint64_t DurationDistribution::bucketStart(size_t bucket) {
  if (bucket < kSubBuckets) return bucket;
  uint64_t shift = bucket / kSubBuckets - 1;
  return (kSubBuckets + bucket % kSubBuckets) << shift;
}

uint64_t DurationDistribution::bucketWidth(size_t bucket) {
  return bucket < kSubBuckets ? 1 : uint64_t{1} << (bucket / kSubBuckets - 1);
}

void DurationDistribution::add(uint64_t value) {
  addRepeated(value, 1);
}

void DurationDistribution::addSummarised(uint64_t count, uint64_t total, uint64_t max) {
  if (count == 0) return;
  max = std::min(max, total);
  addRepeated(max, 1);
  uint64_t rest = count - 1;
  if (rest == 0) return;
  uint64_t left = total - max;
  // The others' mean, as whole values summing to exactly what is left.
  addRepeated(left / rest + 1, left % rest);
  addRepeated(left / rest, rest - left % rest);
}

void DurationDistribution::addRepeated(uint64_t value, uint64_t times) {
  if (times == 0) return;
  count_ += times;
  total_ += value * times;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  if (exact() && values_.size() + times <= kExactValues) {
    sorted_ = sorted_ && (values_.empty() || values_.back() <= value);
    values_.insert(values_.end(), times, value);
    return;
  }
  if (exact()) fold();
  addToBuckets(value, times);
}

void DurationDistribution::merge(const DurationDistribution& other) {
  if (other.count_ == 0) return;
  count_ += other.count_;
  total_ += other.total_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  if (exact() && other.exact() && values_.size() + other.values_.size() <= kExactValues) {
    values_.insert(values_.end(), other.values_.begin(), other.values_.end());
    sorted_ = false;
    return;
  }
  if (exact()) fold();
  for (uint64_t v : other.values_) addToBuckets(v, 1);
  for (size_t b = 0; b < other.buckets_.size(); ++b) {
    if (other.buckets_[b] != 0) addToBuckets(bucketStart(b), other.buckets_[b]);
  }
}

void DurationDistribution::fold() {
  std::vector<uint64_t> values;
  values.swap(values_);  // frees the exact values for good
  buckets_.resize(bucketOf(max_) + 1);
  for (uint64_t v : values) addToBuckets(v, 1);
  sorted_ = true;
}

void DurationDistribution::addToBuckets(uint64_t value, uint64_t times) {
  size_t bucket = bucketOf(value);
  if (bucket >= buckets_.size()) buckets_.resize(bucket + 1);
  buckets_[bucket] += times;
}

uint64_t DurationDistribution::percentile(uint64_t percent) const {
  if (count_ == 0) return 0;
  uint64_t rank = nearestRank(percent, count_);
  if (exact()) {
    if (!sorted_) {
      std::sort(values_.begin(), values_.end());
      sorted_ = true;
    }
    return values_[std::min<uint64_t>(rank, values_.size()) - 1];
  }
  if (rank >= count_) return max_;
  uint64_t seen = 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen >= rank) {
      uint64_t middle = bucketStart(b) + bucketWidth(b) / 2;
      return std::clamp(middle, min_, max_);
    }
  }
  return max_;
}

Distribution DurationDistribution::summary() const {
  if (count_ == 0) return {};
  return {.count = count_,
          .total = total_,
          .p50 = percentile(50),
          .p90 = percentile(90),
          .p99 = percentile(99),
          .max = max_};
}

}  // namespace incise::analyzer
