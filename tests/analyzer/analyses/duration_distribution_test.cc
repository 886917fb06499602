// DurationDistribution: exact nearest-rank percentiles up to kExactValues
// values, then a log-linear histogram within kMaxRelativeError.
#include "analyzer/analyses/distributions/duration_distribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace incise::analyzer {
namespace {

using D = DurationDistribution;

// The true nearest-rank percentile, from every value.
uint64_t trueRank(std::vector<uint64_t> values, uint64_t percent) {
  std::sort(values.begin(), values.end());
  uint64_t rank = std::max<uint64_t>((percent * values.size() + 99) / 100, 1);
  return values[rank - 1];
}

void expectWithin(uint64_t got, uint64_t want) {
  double error = std::abs(static_cast<double>(got) - static_cast<double>(want));
  EXPECT_LE(error, D::kMaxRelativeError * static_cast<double>(want)) << got << " vs " << want;
}

TEST(DurationDistribution, ExactWhileSmall) {
  D d;
  for (uint64_t v = 100; v >= 1; --v) d.add(v);
  EXPECT_TRUE(d.exact());
  Distribution s = d.summary();
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.total, 5050u);
  EXPECT_EQ(s.p50, 50u);
  EXPECT_EQ(s.p90, 90u);
  EXPECT_EQ(s.p99, 99u);
  EXPECT_EQ(s.max, 100u);
  EXPECT_EQ(D().summary().count, 0u);
  EXPECT_EQ(D().percentile(99), 0u);
}

TEST(DurationDistribution, ExactUpToTheLimitThenWithinTheStatedError) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> values;
  D d;
  for (size_t i = 0; i < D::kExactValues; ++i) {
    values.push_back(rng() % 10'000'000);
    d.add(values.back());
  }
  ASSERT_TRUE(d.exact());
  for (uint64_t p : {50, 90, 99}) EXPECT_EQ(d.percentile(p), trueRank(values, p));

  for (size_t i = 0; i < 50'000; ++i) {
    // Log-uniform, so every power of two gets values.
    values.push_back(uint64_t{1} << (rng() % 40) | (rng() & 0xff));
    d.add(values.back());
  }
  ASSERT_FALSE(d.exact());
  uint64_t total = 0;
  for (uint64_t v : values) total += v;
  Distribution s = d.summary();
  EXPECT_EQ(s.count, values.size());
  EXPECT_EQ(s.total, total);
  EXPECT_EQ(s.max, *std::max_element(values.begin(), values.end()));
  for (uint64_t p : {1, 10, 50, 90, 99}) expectWithin(d.percentile(p), trueRank(values, p));
}

TEST(DurationDistribution, SmallValuesStayExactInTheHistogram) {
  D d;
  for (size_t i = 0; i < 3 * D::kExactValues; ++i) d.add(i % 64);
  ASSERT_FALSE(d.exact());
  EXPECT_EQ(d.percentile(50), 31u);
  EXPECT_EQ(d.percentile(100), 63u);
}

TEST(DurationDistribution, BucketsCoverEveryValueWithinTheError) {
  for (uint64_t v : {uint64_t{0}, uint64_t{63}, uint64_t{64}, uint64_t{127}, uint64_t{128},
                     uint64_t{1'000'000'007}, UINT64_MAX}) {
    size_t b = D::bucketOf(v);
    EXPECT_LE(D::bucketStart(b), v);
    EXPECT_LT(v - D::bucketStart(b), D::bucketWidth(b));
    EXPECT_LE(static_cast<double>(D::bucketWidth(b)) / 2,
              D::kMaxRelativeError * static_cast<double>(std::max<uint64_t>(v, 1)) + 0.5);
  }
  EXPECT_EQ(D::bucketOf(63) + 1, D::bucketOf(64));
  EXPECT_EQ(D::bucketOf(UINT64_MAX), 64u * 59 - 1);
}

TEST(DurationDistribution, MergeIsExactWhileItFitsAndAgreesWithAddingAfter) {
  D a, b, both;
  for (uint64_t v = 1; v <= 10; ++v) {
    a.add(v);
    both.add(v);
  }
  for (uint64_t v = 11; v <= 20; ++v) {
    b.add(v);
    both.add(v);
  }
  a.merge(b);
  EXPECT_TRUE(a.exact());
  EXPECT_EQ(a.percentile(50), 10u);
  EXPECT_EQ(a.summary().total, both.summary().total);

  D big;
  for (uint64_t v = 0; v < 2 * D::kExactValues; ++v) big.add(v * 1000);
  D merged = a;
  merged.merge(big);
  for (uint64_t v = 0; v < 2 * D::kExactValues; ++v) both.add(v * 1000);
  EXPECT_FALSE(merged.exact());
  EXPECT_EQ(merged.count(), both.count());
  EXPECT_EQ(merged.total(), both.total());
  for (uint64_t p : {50, 90, 99}) EXPECT_EQ(merged.percentile(p), both.percentile(p));
}

TEST(DurationDistribution, SummarisedValuesKeepCountTotalAndMax) {
  D d;
  d.add(5);
  d.addSummarised(4, 103, 40);  // 40 and three values summing to 63: 21 each
  d.addSummarised(3, 10, 5);    // 5, then 3 and 2
  EXPECT_EQ(d.count(), 8u);
  EXPECT_EQ(d.total(), 118u);
  Distribution s = d.summary();
  EXPECT_EQ(s.max, 40u);
  EXPECT_EQ(s.p50, 5u);  // 2 3 5 5 21 21 21 40
  EXPECT_EQ(d.percentile(75), 21u);
  d.addSummarised(0, 0, 0);
  EXPECT_EQ(d.count(), 8u);

  // Past the exact values, into the histogram in one step.
  D many;
  many.addSummarised(3 * D::kExactValues, 3 * D::kExactValues * 1000 + 9000, 10000);
  EXPECT_FALSE(many.exact());
  EXPECT_EQ(many.count(), 3 * D::kExactValues);
  EXPECT_EQ(many.total(), 3 * D::kExactValues * 1000 + 9000);
  EXPECT_EQ(many.summary().max, 10000u);
  EXPECT_NEAR(static_cast<double>(many.percentile(50)), 1000.0, 1000.0 * D::kMaxRelativeError);
}

}  // namespace
}  // namespace incise::analyzer
