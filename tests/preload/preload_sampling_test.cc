// Poisson sampling by bytes: the weights are the known formula, the sampled
// weights of many allocations add up to their bytes within the sampling
// error, and the table of sampled blocks finds what it holds and nothing
// else, across a full bucket.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "preload/alloc_sampler.h"
#include "preload/sampled_blocks.h"

namespace incise::preload {
namespace {

TEST(AllocSampler, WeightsAreSizeOverTheSamplingProbability) {
  // 64 bytes at a mean of 512 KiB: 1 - exp(-1/8192) sampled: ~512 KiB each.
  EXPECT_NEAR(static_cast<double>(sampleWeight(64, 512 << 10)), 524320.0, 1.0);
  // A block of the mean itself: 1 / (1 - 1/e) of its size.
  EXPECT_EQ(sampleWeight(4096, 4096), 6480u);
  // Far larger than the mean: its own size.
  EXPECT_EQ(sampleWeight(uint64_t{1} << 30, 4096), uint64_t{1} << 30);
}

// Every count of allocations in this test is fixed; only the draws are
// random. The estimate of B bytes of blocks far smaller than the mean N has
// a standard deviation of sqrt(N * B): 64 MiB at 16 KiB is 1.6%, so 8% is 5
// standard deviations.
TEST(AllocSampler, SampledWeightsAddUpToTheBytesAllocated) {
  configureSampling("16384");
  ASSERT_TRUE(samplingEnabled());
  for (uint64_t size : {uint64_t{64}, uint64_t{4096}, uint64_t{100000}}) {
    const uint64_t total = uint64_t{64} << 20;
    uint64_t estimated = 0, samples = 0;
    for (uint64_t allocated = 0; allocated < total; allocated += size) {
      if (uint64_t weight = sampleAllocation(size)) {
        estimated += weight;
        ++samples;
      }
    }
    EXPECT_NEAR(static_cast<double>(estimated), static_cast<double>(total), 0.08 * total)
        << size << "-byte blocks, " << samples << " samples";
  }
}

TEST(AllocSampler, ABadMeanTurnsSamplingOffAndNoMeanKeepsItAsItWas) {
  configureSampling("4096");
  configureSampling(nullptr);
  EXPECT_TRUE(samplingEnabled());
  for (const char* bad : {"", "0", "12x", "1073741825", "99999999999999999999999"}) {
    configureSampling("4096");
    configureSampling(bad);
    EXPECT_FALSE(samplingEnabled()) << bad;
    EXPECT_EQ(sampleAllocation(1 << 20), 0u) << bad;
  }
}

TEST(SampledBlocks, FindsWhatItHoldsOnceAndNothingElse) {
  static SampledBlocks blocks;  // 1 MiB: not on the stack
  std::vector<uintptr_t> held;
  for (uintptr_t i = 1; i <= 5000; ++i) {
    held.push_back(0x7f0000000000 + i * 48);
    ASSERT_TRUE(blocks.insert(reinterpret_cast<void*>(held.back())));
  }
  EXPECT_EQ(blocks.size(), 5000u);
  EXPECT_FALSE(blocks.erase(reinterpret_cast<void*>(0x7f0000000000 + 5001 * 48)));
  for (uintptr_t address : held) EXPECT_TRUE(blocks.erase(reinterpret_cast<void*>(address)));
  for (uintptr_t address : held) EXPECT_FALSE(blocks.erase(reinterpret_cast<void*>(address)));
  EXPECT_EQ(blocks.size(), 0u);
}

TEST(SampledBlocks, ABlockWhoseBucketIsFullIsRefusedUntilFreesMakeRoom) {
  static SampledBlocks blocks;
  std::vector<const void*> held;
  const void* refused = nullptr;
  constexpr size_t kSlots = SampledBlocks::kBuckets * SampledBlocks::kSlotsPerBucket;
  for (uintptr_t address = 0x10000; !refused; address += 16) {
    const void* block = reinterpret_cast<const void*>(address);
    if (blocks.insert(block)) {
      held.push_back(block);
    } else {
      refused = block;
    }
    ASSERT_LE(held.size(), kSlots);
  }
  EXPECT_GE(held.size(), SampledBlocks::kSlotsPerBucket);
  EXPECT_FALSE(blocks.erase(refused));
  for (const void* block : held) EXPECT_TRUE(blocks.erase(block));
  EXPECT_TRUE(blocks.insert(refused));
}

}  // namespace
}  // namespace incise::preload
