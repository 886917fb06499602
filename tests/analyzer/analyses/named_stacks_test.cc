// Stacks named as ids: equal named paths merge (across stack ids and pids),
// and the flat profile and folded stacks computed from ids match the names.
#include <gtest/gtest.h>

#include <algorithm>

#include "analyzer/analyses/profile/flame_weights.h"
#include "analyzer/analyses/profile/flat_profile.h"
#include "analyzer/analyses/profile/stack_weights.h"
#include "analyzer/model/stack_namer.h"
#include "analyzer/model/trace.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
namespace {
using testing::TraceBuilder;

constexpr uint32_t kOtherPid = 200;

TEST(NameTableTest, OneIdPerDistinctNameAndStableText) {
  NameTable names;
  NameId main = names.intern("main");
  NameId work = names.intern(std::string("work"));
  for (int i = 0; i < 100; ++i) names.intern("f" + std::to_string(i));  // grows the table
  EXPECT_EQ(names.intern("main"), main);
  EXPECT_NE(work, main);
  EXPECT_EQ(names.name(main), "main");
  EXPECT_EQ(names.name(work), "work");
  EXPECT_EQ(names.size(), 102u);
  const NameId a[] = {main, work}, b[] = {work};
  EXPECT_TRUE(names.namesLess(a, b));  // "main" < "work"
  EXPECT_FALSE(names.namesLess(b, a));
  EXPECT_FALSE(names.namesLess(a, a));
}

TEST(NameTableTest, KeptNamesAreReferencedAndShareIdsWithCopies) {
  NameTable names;
  const std::string frame_name = "std::vector<int>::push_back";
  NameId kept = names.internKept(frame_name);
  EXPECT_EQ(&names.name(kept), &frame_name);  // no copy
  EXPECT_EQ(names.intern("std::vector<int>::push_back"), kept);
  NameId copied = names.intern("main");
  const std::string main_again = "main";
  EXPECT_EQ(names.internKept(main_again), copied);
  EXPECT_NE(&names.name(copied), &main_again);  // the first (copied) entry stays
  EXPECT_EQ(names.size(), 2u);
}

class NamedStacksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    b.thread(101, "worker");
    b.thread(201, "other", kOtherPid);
    // Two stack ids with different return addresses in the same functions:
    // they name the same path.
    work = b.stack({"work", "main"});
    work_elsewhere = b.rawStack({b.function("work") + 0x40, b.function("main") + 0x80});
    fib = b.stack({"fib", "fib", "main"});
    b.sample(1000, 101, work);
    auto written = b.write();
    ASSERT_TRUE(written) << written.error().message();
    auto opened = Trace::open(*written, TraceOptions{});
    ASSERT_TRUE(opened) << opened.error().message();
    trace = std::move(*opened);
  }

  static const WeightedStack* find(const NamedStacks& stacks,
                                   const std::vector<std::string>& root_first) {
    for (const WeightedStack& stack : stacks) {
      if (stacks.rootFirstNames(stack) == root_first) return &stack;
    }
    return nullptr;
  }

  TraceBuilder b;
  uint64_t work = 0, work_elsewhere = 0, fib = 0;
  std::unique_ptr<Trace> trace;
};

TEST_F(NamedStacksTest, EqualNamedPathsMergeAcrossStackIdsAndPids) {
  StackWeights weights;
  weights.add(TraceBuilder::kPid, work, 10, 2);
  weights.add(TraceBuilder::kPid, work_elsewhere, 20, 3);
  weights.add(TraceBuilder::kPid, work, 30, 1);
  weights.add(TraceBuilder::kPid, 0, 40, 4);
  weights.add(kOtherPid, 0, 50, 5);
  weights.add(TraceBuilder::kPid, fib, 60, 7);
  EXPECT_EQ(weights.distinct(), 5u);
  EXPECT_EQ(weights.total(), 22u);

  StackNamer namer(*trace, FrameGrouping::kFunction);
  NamedStacks stacks = weights.named(namer);
  ASSERT_EQ(stacks.size(), 3u);
  const WeightedStack* merged = find(stacks, {"main", "work"});
  ASSERT_NE(merged, nullptr);
  EXPECT_EQ(merged->weight, 6u);
  EXPECT_EQ(merged->events, 3u);
  const WeightedStack* no_stack = find(stacks, {"[no stack]"});
  ASSERT_NE(no_stack, nullptr);
  EXPECT_EQ(no_stack->weight, 9u);
  EXPECT_EQ(no_stack->events, 2u);
  const WeightedStack* recursive = find(stacks, {"main", "fib", "fib"});
  ASSERT_NE(recursive, nullptr);
  EXPECT_EQ(recursive->root_first[1], recursive->root_first[2]);  // one id per name
}

TEST_F(NamedStacksTest, NoStackNameOnlyWhenAStackLacksFrames) {
  StackWeights weights;
  weights.add(TraceBuilder::kPid, work, 10, 1);
  StackNamer namer(*trace, FrameGrouping::kFunction);
  NamedStacks stacks = weights.named(namer);
  ASSERT_EQ(stacks.size(), 1u);
  for (NameId id = 0; id < namer.names().size(); ++id) {
    EXPECT_NE(namer.names().name(id), "[no stack]");
  }
}

TEST_F(NamedStacksTest, FlatProfileAndFoldedStacksFromIds) {
  StackWeights weights;
  weights.add(TraceBuilder::kPid, work, 10, 2);
  weights.add(kOtherPid, 0, 20, 1);
  weights.add(TraceBuilder::kPid, work_elsewhere, 30, 3);
  weights.add(TraceBuilder::kPid, fib, 40, 4);
  StackNamer namer(*trace, FrameGrouping::kFunction);
  // A name interned by another report on the same namer is not a row here.
  namer.names().intern("unused_elsewhere");
  NamedStacks stacks = weights.named(namer);

  FlatProfile profile = computeFlatProfile(stacks);
  EXPECT_EQ(profile.weight, 10u);
  auto row = [&](const std::string& name) -> const FlatProfileRow* {
    auto it = std::find_if(profile.rows.begin(), profile.rows.end(),
                           [&](const FlatProfileRow& r) { return r.name == name; });
    return it == profile.rows.end() ? nullptr : &*it;
  };
  ASSERT_EQ(profile.rows.size(), 4u);  // work, fib, main, [no stack]
  EXPECT_EQ(profile.rows[0].name, "work");
  EXPECT_EQ(profile.rows[0].self, 5u);
  ASSERT_NE(row("fib"), nullptr);
  EXPECT_EQ(row("fib")->self, 4u);
  EXPECT_EQ(row("fib")->total, 4u);  // recursion counts once per stack
  ASSERT_NE(row("main"), nullptr);
  EXPECT_EQ(row("main")->self, 0u);
  EXPECT_EQ(row("main")->total, 9u);
  EXPECT_DOUBLE_EQ(row("main")->total_percent, 90.0);
  EXPECT_EQ(row("unused_elsewhere"), nullptr);

  FoldedStacks folded = foldedStacks(stacks);
  EXPECT_EQ(folded.total(), 10u);
  EXPECT_EQ(folded.paths(), (std::map<std::string, uint64_t>{
                                {"main;work", 5}, {"main;fib;fib", 4}, {"[no stack]", 1}}));
}

}  // namespace
}  // namespace incise::analyzer
