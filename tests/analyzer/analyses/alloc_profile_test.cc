// Sampled allocations added up: bytes and allocations per stack from the
// samples' weights, live blocks matched to their frees by process and
// address in time order (an address allocated again is a new block), sites
// past the allocator's own frames, and the flame graph weights.
#include <gtest/gtest.h>

#include "analyzer/analyses/alloc/alloc_profile.h"
#include "analyzer/analyses/alloc/alloc_sites.h"
#include "analyzer/analyses/profile/flame_weights.h"
#include "analyzer/model/stack_namer.h"
#include "analyzer/model/trace.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
namespace {
using testing::TraceBuilder;

class AllocProfileTest : public ::testing::Test {
 protected:
  std::unique_ptr<Trace> open(TraceBuilder& b, TraceOptions options = {}) {
    auto written = b.write();
    EXPECT_TRUE(written) << written.error().message();
    auto opened = Trace::open(*written, options);
    EXPECT_TRUE(opened) << opened.error().message();
    return opened ? std::move(*opened) : nullptr;
  }

  const AllocTotals* totalsOf(const AllocProfile& profile, uint64_t stack) {
    for (const auto& [key, totals] : profile.stacks)
      if (key.stack_id == stack) return &totals;
    return nullptr;
  }
};

TEST_F(AllocProfileTest, WeightsAddUpAndOnlyUnfreedBlocksStayLive) {
  TraceBuilder b;
  b.thread(101, "main");
  b.thread(102, "freer");
  const uint64_t parse = b.stack({"parse", "main"});
  const uint64_t leak = b.stack({"leak", "main"});
  // Two samples of 64-byte blocks standing for 4096 bytes (64 blocks) each;
  // one is freed by another thread.
  b.allocation(100, 101, 0x1000, 64, 4096, parse);
  b.allocation(200, 101, 0x2000, 64, 4096, parse);
  b.freed(300, 102, 0x1000);
  b.freed(310, 102, 0x2000);
  // The leak's address was a parse block before: only its later allocation stays.
  b.allocation(400, 101, 0x2000, 1 << 20, 1 << 20, leak);
  b.freed(500, 101, 0x9000);  // a block allocated before the recording
  auto trace = open(b);
  ASSERT_TRUE(trace);

  AllocProfile profile = collectAllocProfile(*trace);
  const AllocTotals* parsed = totalsOf(profile, parse);
  const AllocTotals* leaked = totalsOf(profile, leak);
  ASSERT_TRUE(parsed && leaked);
  EXPECT_EQ(parsed->allocated_bytes, 8192u);
  EXPECT_EQ(parsed->allocations(), 128u);
  EXPECT_EQ(parsed->samples, 2u);
  EXPECT_EQ(parsed->live_bytes, 0u);
  EXPECT_EQ(leaked->live_bytes, uint64_t{1} << 20);
  EXPECT_EQ(leaked->liveAllocations(), 1u);
  EXPECT_EQ(profile.total.allocated_bytes, 8192u + (1 << 20));
  EXPECT_EQ(profile.total.live_bytes, uint64_t{1} << 20);
  EXPECT_EQ(profile.unmatched_frees, 1u);

  StackWeights live = allocStackWeights(profile, AllocWeighting::kLive);
  EXPECT_EQ(live.total(), uint64_t{1} << 20);
  EXPECT_EQ(collectFlameWeights(*trace, FlameWeighting::kAllocated).total(), 8192u + (1 << 20));
  EXPECT_EQ(flameUnit(*trace, FlameWeighting::kLive), "bytes");
}

TEST_F(AllocProfileTest, AFreeAfterTheWindowLeavesTheBlockLiveAtItsEnd) {
  TraceBuilder b;
  b.thread(101, "main");
  const uint64_t work = b.stack({"work", "main"});
  b.allocation(100, 101, 0x1000, 4096, 8192, work);
  b.freed(5000, 101, 0x1000);
  TraceOptions options;
  options.filter.window = RelativeWindow{.start_ns = 0, .end_ns = 1000};
  auto trace = open(b, options);
  ASSERT_TRUE(trace);
  EXPECT_EQ(collectAllocProfile(*trace).total.live_bytes, 8192u);
}

TEST_F(AllocProfileTest, SitesLookThroughTheAllocatorsOwnFrames) {
  EXPECT_EQ(allocationSite({"main", "parse_request", "operator new", "malloc"}), "parse_request");
  EXPECT_EQ(allocationSite({"main", "load", "std::__new_allocator<char>::allocate"}), "load");
  EXPECT_EQ(allocationSite({"main", "copy_name", "strdup"}), "copy_name");
  EXPECT_EQ(allocationSite({"main", "make"}), "make");
  EXPECT_EQ(allocationSite({"malloc"}), "malloc");
  EXPECT_EQ(allocationSite({}), "[no stack]");
}

TEST_F(AllocProfileTest, NamedSitesMergeEqualPathsLargestFirst) {
  TraceBuilder b;
  b.thread(101, "main");
  const uint64_t small = b.stack({"operator new", "small", "main"});
  const uint64_t big = b.stack({"big", "main"});
  const uint64_t big_again = b.rawStack({b.frameAddress("big") + 8, b.frameAddress("main")});
  b.allocation(100, 101, 0x1000, 16, 1000, small);
  b.allocation(200, 101, 0x2000, 100, 3000, big);
  b.allocation(300, 101, 0x3000, 100, 3000, big_again);
  auto trace = open(b);
  ASSERT_TRUE(trace);
  StackNamer namer(*trace, FrameGrouping::kFunction);
  std::vector<AllocSite> sites = namedAllocSites(collectAllocProfile(*trace), namer);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].site, "big");
  EXPECT_EQ(sites[0].totals.allocated_bytes, 6000u);
  EXPECT_EQ(sites[0].totals.samples, 2u);
  EXPECT_EQ(sites[1].site, "small");
  EXPECT_EQ(sites[1].root_first, (std::vector<std::string>{"main", "small", "operator new"}));
}

}  // namespace
}  // namespace incise::analyzer
