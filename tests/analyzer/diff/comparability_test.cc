// When two traces are hard to compare, the diff says why and what it did.
#include "analyzer/diff/comparability.h"

#include <gtest/gtest.h>

#include <set>

namespace incise::analyzer {
namespace {

TraceFacts facts() {
  TraceFacts f;
  f.host = "db1";
  f.kernel = "6.1.0";
  f.duration_ns = 10'000'000'000;
  f.sample_hz = 999;
  f.samples = 9990;
  f.build_ids = {{"/usr/bin/app", "aaaa1111"}, {"/usr/lib/libc.so.6", "cccc"}};
  return f;
}

std::set<std::string> kinds(const std::vector<ComparabilityNote>& notes) {
  std::set<std::string> k;
  for (const auto& n : notes) k.insert(n.kind);
  return k;
}

TEST(Comparability, SameSetupHasNothingToSay) {
  EXPECT_TRUE(assessComparability(facts(), facts()).empty());
}

TEST(Comparability, DifferentBinaryDurationAndRate) {
  TraceFacts next = facts();
  next.build_ids["/usr/bin/app"] = "bbbb2222";
  next.build_ids["/usr/lib/libnew.so"] = "dddd";
  next.duration_ns = 30'000'000'000;  // 3x
  next.sample_hz = 99;
  next.samples = 2970;
  auto notes = assessComparability(facts(), next);
  EXPECT_EQ(kinds(notes),
            (std::set<std::string>{"build-id", "objects", "duration", "sample-rate"}));
  for (const auto& n : notes) {
    EXPECT_FALSE(n.action.empty()) << n.kind;
    if (n.kind == "build-id") {
      EXPECT_NE(n.message.find("/usr/bin/app"), std::string::npos);
      EXPECT_NE(n.message.find("aaaa1111"), std::string::npos);
      EXPECT_NE(n.message.find("bbbb2222"), std::string::npos);
    }
    if (n.kind == "duration") {
      EXPECT_NE(n.message.find("3.0x"), std::string::npos) << n.message;
    }
    if (n.kind == "sample-rate") {
      EXPECT_NE(n.action.find("shares"), std::string::npos);
    }
  }
}

TEST(Comparability, AchievedRateAndFewSamplesAndHost) {
  TraceFacts next = facts();
  next.samples = 50;  // same requested rate, almost no samples: an idle run
  next.host = "db2";
  auto notes = assessComparability(facts(), next);
  EXPECT_EQ(kinds(notes), (std::set<std::string>{"sample-rate", "samples", "host"}));
}

TEST(Comparability, AllocationsOnOneSideAtAnotherMeanOrFew) {
  TraceFacts base = facts(), next = facts();
  next.allocation_samples = 5000;
  next.alloc_sample_bytes = 524'288;
  auto one_side = assessComparability(base, next);
  ASSERT_EQ(one_side.size(), 1u);
  EXPECT_EQ(one_side[0].kind, "allocations");
  EXPECT_NE(one_side[0].message.find("only in new"), std::string::npos) << one_side[0].message;
  base.allocation_samples = 40;
  base.alloc_sample_bytes = 16'384;
  auto both = assessComparability(base, next);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_NE(both[0].message.find("16.0 KiB in base, 512 KiB in new"), std::string::npos)
      << both[0].message;
  EXPECT_NE(both[1].message.find("40 in base, 5000 in new"), std::string::npos) << both[1].message;
  base.allocation_samples = 5000;
  base.alloc_sample_bytes = 524'288;
  EXPECT_TRUE(assessComparability(base, next).empty());
}

TEST(Comparability, WithoutBuildIdsItCannotTell) {
  TraceFacts base = facts(), next = facts();
  for (TraceFacts* f : {&base, &next}) {
    for (const auto& [path, id] : f->build_ids) f->unidentified_objects.insert(path);
    f->build_ids.clear();
  }
  auto notes = assessComparability(base, next);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].kind, "build-id");
  EXPECT_NE(notes[0].message.find("no build-ids in either trace"), std::string::npos);
  EXPECT_NE(notes[0].message.find("cannot tell"), std::string::npos);

  // One side only: names that side, and lists no objects as gone or new.
  notes = assessComparability(facts(), next);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].message.find("no build-ids in new"), std::string::npos) << notes[0].message;
}

TEST(Comparability, AnObjectWithoutBuildIdOnOneSide) {
  TraceFacts next = facts();
  next.build_ids.erase("/usr/bin/app");
  next.unidentified_objects.insert("/usr/bin/app");
  auto notes = assessComparability(facts(), next);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].kind, "build-id");
  EXPECT_NE(notes[0].message.find("/usr/bin/app"), std::string::npos);
  EXPECT_NE(notes[0].message.find("cannot tell"), std::string::npos);
  EXPECT_EQ(notes[0].message.find("libc"), std::string::npos) << "libc's ids match";
}

}  // namespace
}  // namespace incise::analyzer
