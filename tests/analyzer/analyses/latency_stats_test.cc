// Known answers for the latency statistics and heat maps, from hand-built rows.
#include <gtest/gtest.h>

#include <sstream>

#include "analyzer/analyses/latency/latency_heatmap.h"
#include "analyzer/analyses/latency/latency_names.h"
#include "analyzer/analyses/latency/latency_stats.h"
#include "analyzer/render/heat_map.h"

namespace incise::analyzer {
namespace {

using format::Latency;
using format::LatencyHistogram;

Latency call(uint64_t time, uint64_t duration, uint64_t probe = 1, uint64_t stack = 0) {
  return Latency{.time = time, .duration = duration, .pid = 10, .tid = 11, .source = 1,
                 .probe = probe, .stack_id = stack, .weight = 1};
}

TEST(LatencyStats, TwoThousandCallsOfWhichAHundredTakeTwoMilliseconds) {
  LatencyStatsBuilder stats(LatencyGrouping::kByName);
  for (uint64_t i = 1; i <= 2000; ++i)
    stats.add(call(i * 1000, i % 20 == 0 ? 2'000'000 + i : 5'000 + i));
  std::vector<LatencyGroupStats> groups = stats.finish();
  ASSERT_EQ(groups.size(), 1u);
  const LatencyGroupStats& g = groups[0];
  EXPECT_EQ(g.count, 2000u);
  uint64_t at_least_1ms = 0;
  for (size_t b = 20; b < kLog2Buckets; ++b) at_least_1ms += g.histogram[b];  // 2^20 > 1 ms
  EXPECT_EQ(at_least_1ms, 100u);
  EXPECT_EQ(g.histogram[20], 100u);  // 2.0 ms is in [1.05 ms, 2.10 ms)
  EXPECT_EQ(g.histogram[12], 1900u);  // 5 us is in [4.1 us, 8.2 us)
  EXPECT_EQ(g.max_ns, 2'002'000u);
  EXPECT_TRUE(g.exact_percentiles);
  // Nearest rank: 1,900 fast calls, so p90 is fast and p99 slow.
  EXPECT_LT(g.p50_ns, 8'192u);
  EXPECT_LT(g.p90_ns, 8'192u);
  EXPECT_GE(g.p99_ns, 2'000'000u);
  uint64_t total = 0;
  for (uint64_t i = 1; i <= 2000; ++i) total += i % 20 == 0 ? 2'000'000 + i : 5'000 + i;
  EXPECT_EQ(g.total_ns, total);
}

TEST(LatencyStats, SampledRowsCountTheirWeightAndStacksSplitGroups) {
  LatencyStatsBuilder stats(LatencyGrouping::kByStack);
  Latency a = call(1, 100, 1, 7);
  a.weight = 10;
  stats.add(a);
  stats.add(a);
  stats.add(call(2, 300, 1, 8));
  auto groups = stats.finish();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].stack_id, 7u);  // 2,000 ns in all: first
  EXPECT_EQ(groups[0].count, 20u);
  EXPECT_TRUE(groups[0].sampled);
  EXPECT_EQ(groups[0].total_ns, 2000u);
  EXPECT_EQ(groups[1].count, 1u);
  EXPECT_FALSE(groups[1].sampled);
}

TEST(LatencyStats, HistogramsFromBpfGivePercentilesAsBucketBounds) {
  LatencyStatsBuilder stats(LatencyGrouping::kByName);
  stats.add(LatencyHistogram{.time = 0, .end_time = 10, .pid = 10, .source = 2, .probe = 35,
                             .bucket = 19, .count = 90, .total_ns = 90 * 600'000, .weight = 1});
  stats.add(LatencyHistogram{.time = 0, .end_time = 10, .pid = 10, .source = 2, .probe = 35,
                             .bucket = 23, .count = 10, .total_ns = 10 * 10'000'000,
                             .max_ns = 10'400'000, .weight = 1});
  auto groups = stats.finish();
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].count, 100u);
  EXPECT_FALSE(groups[0].exact_percentiles);
  EXPECT_TRUE(groups[0].from_buckets);
  EXPECT_EQ(groups[0].p50_ns, (uint64_t{1} << 20) - 1);
  EXPECT_EQ(groups[0].p99_ns, 10'400'000u);  // the bucket's bound, capped at the max
  EXPECT_EQ(groups[0].max_ns, 10'400'000u);
  EXPECT_EQ(groups[0].total_ns, 90u * 600'000 + 10u * 10'000'000);
}

TEST(LatencyNames, FromTheTraceElseNumbers) {
  format::Metadata metadata;
  metadata.latency_probes = {{.source = 1, .id = 1, .name = "parse", .object = "/srv/app"},
                             {.source = 3, .id = (7u << 20) | 3, .name = "loop3"}};
  LatencyNames names(metadata);
  EXPECT_EQ(names.name(1, 1, 0), "parse");
  EXPECT_EQ(names.object(1, 1), "/srv/app");
  EXPECT_EQ(names.name(3, (7u << 20) | 3, 1), "loop3 write");
  EXPECT_EQ(names.name(3, (8u << 20) | 1, 0), "device 8:1 read");
  EXPECT_EQ(names.name(2, 35, 0), "syscall 35");
}

TEST(LatencyHeatMap, CallsLandInTheirColumnAndBucket) {
  EXPECT_EQ(heatMapColumnNs(3'000'000'000, 150), 20'000'000u);
  EXPECT_EQ(heatMapColumnNs(10'000, 150), 1'000'000u);
  LatencyHeatMapBuilder heat(1'000'000'000, 4'000'000'000, 1'000'000'000, 150);
  heat.add(call(1'000'000'000, 5'000));         // column 0, bucket 12
  heat.add(call(1'030'000'000, 2'000'000));     // column 1, bucket 20
  heat.add(call(3'999'999'999, 2'000'000));     // the last column
  heat.add(call(4'500'000'000, 2'000'000));     // outside: not counted
  format::Metadata metadata;
  metadata.latency_probes = {{.source = 1, .id = 1, .name = "a<b>"}};
  auto maps = heat.finish(LatencyNames(metadata), {}, {});
  ASSERT_EQ(maps.size(), 1u);
  const HeatMap& map = maps[0];
  EXPECT_EQ(map.name, "a<b>");
  EXPECT_EQ(map.column_ns, 20'000'000u);
  ASSERT_EQ(map.cells.size(), 150u);
  EXPECT_EQ(map.first_bucket, 12u);
  EXPECT_EQ(map.cells[0][0], 1u);
  EXPECT_EQ(map.cells[1][20 - 12], 1u);
  EXPECT_EQ(map.cells[149][20 - 12], 1u);
  std::ostringstream html;
  writeHeatMapsHtml(maps, "t & <x>", html);
  EXPECT_NE(html.str().find("a&lt;b&gt;"), std::string::npos);
  EXPECT_EQ(html.str().find("a<b>"), std::string::npos);
  EXPECT_NE(html.str().find("t &amp; &lt;x&gt;"), std::string::npos);
}

}  // namespace
}  // namespace incise::analyzer
