// A distribution of durations (or any uint64 values) in bounded memory, for
// the percentiles every report shows (locks, diff, correlate).
//
// The first kExactValues values are kept as they are, so small groups (and
// the known-answer tests) get exact nearest-rank percentiles. Past that, all
// values fold into a log-linear histogram: values below 2^kSubBucketBits
// exactly, larger ones in 2^kSubBucketBits sub-buckets per power of two.
// A percentile read from the histogram is its bucket's midpoint, within
// kMaxRelativeError (1/128, under 0.8%) of the true nearest-rank value;
// count, total, min and max stay exact. Memory: at most kExactValues values
// (32 KiB), or one counter per bucket up to the largest value's (at most
// 3776 counters, 30 KiB; under 13 KiB when every value is below a second).
//
//   DurationDistribution waits;
//   for (uint64_t ns : wait_times) waits.add(ns);
//   Distribution d = waits.summary();   // count, total, p50, p90, p99, max
//   std::cout << d.p99 << (waits.exact() ? "" : " (+-0.8%)");
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace incise::analyzer {

struct Distribution {
  uint64_t count = 0;
  uint64_t total = 0;
  uint64_t p50 = 0;
  uint64_t p90 = 0;
  uint64_t p99 = 0;
  uint64_t max = 0;
};

class DurationDistribution {
 public:
  static constexpr size_t kExactValues = 4096;
  static constexpr unsigned kSubBucketBits = 6;  // 64 sub-buckets per power of two
  static constexpr double kMaxRelativeError = 1.0 / (2 << kSubBucketBits);

  void add(uint64_t value);
  // `count` values known only by their sum and the largest (a recorder's
  // summary of short waits): the largest once, the others at their mean, so
  // count, total and max stay exact and the percentiles are estimates
  // within the values' range.
  void addSummarised(uint64_t count, uint64_t total, uint64_t max);
  // Adds every value of `other` (exact while the two together fit).
  void merge(const DurationDistribution& other);

  uint64_t count() const { return count_; }
  uint64_t total() const { return total_; }
  // True while the percentiles are exact (no more than kExactValues values).
  bool exact() const { return buckets_.empty(); }
  // The smallest value with at least `percent`% of the values at or below
  // it; 0 when empty.
  uint64_t percentile(uint64_t percent) const;
  Distribution summary() const;

  // The histogram's bucket for `value`, and the bucket's smallest value and width.
  static size_t bucketOf(uint64_t value);
  static uint64_t bucketStart(size_t bucket);
  static uint64_t bucketWidth(size_t bucket);

 private:
  void fold();
  void addRepeated(uint64_t value, uint64_t times);
  void addToBuckets(uint64_t value, uint64_t times);

  uint64_t count_ = 0;
  uint64_t total_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  // Exact mode: the values (sorted lazily by percentile()).
  mutable std::vector<uint64_t> values_;
  mutable bool sorted_ = true;
  // Histogram mode: counts per bucket, up to the largest value's bucket.
  std::vector<uint64_t> buckets_;
};

}  // namespace incise::analyzer
