#include "analyzer/model/filter.h"

#include <gtest/gtest.h>

namespace incise::analyzer {
namespace {

TEST(FilterTest, ParsesTimeRangesInSeconds) {
  auto both = Filter::parseTimeRange("1.5..3");
  ASSERT_TRUE(both);
  EXPECT_EQ(both->start_ns, 1'500'000'000u);
  EXPECT_EQ(both->end_ns, 3'000'000'000u);
  auto open_start = Filter::parseTimeRange("..2");
  ASSERT_TRUE(open_start);
  EXPECT_EQ(open_start->start_ns, 0u);
  EXPECT_EQ(open_start->end_ns, 2'000'000'000u);
  auto open_end = Filter::parseTimeRange("0.25..");
  ASSERT_TRUE(open_end);
  EXPECT_EQ(open_end->start_ns, 250'000'000u);
  EXPECT_EQ(open_end->end_ns, UINT64_MAX);
}

TEST(FilterTest, RejectsBadRangesWithAMessage) {
  for (const char* bad : {"3", "a..b", "3..1", "-1..2", "1..2x", "nan..1"}) {
    auto window = Filter::parseTimeRange(bad);
    EXPECT_FALSE(window) << bad;
    if (!window) {
      EXPECT_NE(window.error().message().find("--time"), std::string::npos);
    }
  }
}

TEST(FilterTest, ParsesWhereConditions) {
  auto one = Filter::parseWhere("req=42");
  ASSERT_TRUE(one) << one.error().message();
  EXPECT_EQ(one->name, "req");
  EXPECT_EQ(one->values, (std::set<uint64_t>{42}));
  EXPECT_FALSE(one->negated);
  EXPECT_TRUE(one->matches(42));
  EXPECT_FALSE(one->matches(43));
  auto many = Filter::parseWhere("conn=1,0x10,18446744073709551615");
  ASSERT_TRUE(many) << many.error().message();
  EXPECT_EQ(many->values, (std::set<uint64_t>{1, 16, UINT64_MAX}));
  auto not_zero = Filter::parseWhere("req!=0");
  ASSERT_TRUE(not_zero) << not_zero.error().message();
  EXPECT_EQ(not_zero->name, "req");
  EXPECT_TRUE(not_zero->negated);
  EXPECT_FALSE(not_zero->matches(0));
  EXPECT_TRUE(not_zero->matches(7));
  EXPECT_EQ(many->text(), "conn=1,16,18446744073709551615");
  EXPECT_EQ(not_zero->text(), "req!=0");
  Filter f;
  f.where.push_back(*one);
  EXPECT_FALSE(f.empty());
}

// An otel trace id typed whole: its last 8 bytes are the value, its first 8
// must be those of the id held.
TEST(FilterTest, ATraceIdTypedWholeMatchesOnBothHalves) {
  constexpr uint64_t kHigh = 0x4bf92f3577b34da6u, kLow = 0xa3ce929d0e0e4736u;
  for (const char* typed : {"trace_id=4bf92f3577b34da6a3ce929d0e0e4736",
                            "trace_id=0x4bf92f3577b34da6a3ce929d0e0e4736"}) {
    auto id = Filter::parseWhere(typed);
    ASSERT_TRUE(id) << id.error().message();
    EXPECT_EQ(id->values, (std::set<uint64_t>{kLow}));
    EXPECT_TRUE(id->matches(kLow, kHigh));
    EXPECT_FALSE(id->matches(kLow, kHigh + 1));
    EXPECT_FALSE(id->matches(kLow, std::nullopt));
    EXPECT_FALSE(id->matches(kLow + 1, kHigh));
    EXPECT_EQ(id->text(), "trace_id=4bf92f3577b34da6a3ce929d0e0e4736");
  }
  auto other = Filter::parseWhere("trace_id!=4bf92f3577b34da6a3ce929d0e0e4736,7");
  ASSERT_TRUE(other) << other.error().message();
  EXPECT_FALSE(other->matches(kLow, kHigh));
  EXPECT_TRUE(other->matches(kLow, 1));
  EXPECT_FALSE(other->matches(7));
  EXPECT_EQ(other->text(), "trace_id!=7,4bf92f3577b34da6a3ce929d0e0e4736");
  auto bad = Filter::parseWhere("trace_id=4bf92f3577b34da6a3ce929d0e0e473g");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("32-digit hex trace id"), std::string::npos);
}

TEST(FilterTest, RejectsBadWhereConditionsWithAMessage) {
  for (const char* bad :
       {"req", "=1", "req=", "!=1", "req=1,", "req=,1", "req=x", "req=-1", "req=0x", "req=0xg",
        "req=0x10000000000000000", "req=18446744073709551616"}) {
    auto condition = Filter::parseWhere(bad);
    EXPECT_FALSE(condition) << bad;
    if (!condition) {
      EXPECT_NE(condition.error().message().find("--where"), std::string::npos) << bad;
    }
  }
}

TEST(FilterTest, EmptySetsLetEverythingThrough) {
  Filter f;
  EXPECT_TRUE(f.empty());
  EXPECT_TRUE(f.matchesIds(1, 2));
  EXPECT_TRUE(f.matchesCpu(7));
  f.pids = {1};
  f.cpus = {0, 1};
  EXPECT_TRUE(f.matchesIds(1, 99));
  EXPECT_FALSE(f.matchesIds(2, 99));
  EXPECT_TRUE(f.matchesCpu(1));
  EXPECT_FALSE(f.matchesCpu(2));
}

}  // namespace
}  // namespace incise::analyzer
