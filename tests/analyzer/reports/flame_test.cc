#include <gtest/gtest.h>

#include "tests/analyzer/reports/report_runner.h"
#include "tests/analyzer/reports/sched_trace.h"

namespace incise::analyzer {
int runFlame(const std::vector<std::string>& args);

namespace {
using testing::runReport;
using testing::TraceBuilder;

class FlameTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uint64_t compute = b.stack({"compute", "work", "main"});
    uint64_t copy = b.stack({"memcpy", "work", "main"});
    uint64_t lock_site = b.stack({"take_lock", "main"});
    for (int i = 0; i < 6; ++i) b.sample(1000 * (i + 1), 101, compute);
    for (int i = 0; i < 3; ++i) b.sample(10'000 + i, 102, copy);
    b.lock(101, 0xdead0, 100, 600, 900, lock_site, format::kLockContended);
    b.lock(102, 0xdead0, 650, 900, 950, lock_site, format::kLockContended);
    b.lock(101, 0xdead0, 1000, 1000, 1100, lock_site);  // uncontended: weighs nothing
    auto written = testing::writeSchedTrace(b);
    ASSERT_TRUE(written) << written.error().message();
    path = *written;
  }
  TraceBuilder b;
  std::string path;
};

TEST_F(FlameTest, FoldedOnCpuSamples) {
  auto result = runReport(runFlame, {path}, ".folded");
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.output, "main;work;compute 6\nmain;work;memcpy 3\n");
}

TEST_F(FlameTest, FoldedOffCpuIsBlockedTimeOnly) {
  auto result = runReport(runFlame, {path, "--off-cpu"}, ".folded");
  ASSERT_EQ(result.exit_code, 0);
  // 101 blocked 1000 -> 1800; 102's preemption is not blocked time.
  EXPECT_EQ(result.output, "main;lock;futex_wait 800\n");
}

TEST_F(FlameTest, FoldedLockWaitTime) {
  auto result = runReport(runFlame, {path, "--locks"}, ".folded");
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.output, "main;take_lock 750\n");  // 500 + 250
}

TEST_F(FlameTest, FiltersApply) {
  auto result = runReport(runFlame, {path, "--tid", "102"}, ".folded");
  EXPECT_EQ(result.output, "main;work;memcpy 3\n");
}

TEST_F(FlameTest, HtmlAndSvgByExtensionOrFormat) {
  auto html = runReport(runFlame, {path}, ".html");
  ASSERT_EQ(html.exit_code, 0);
  EXPECT_EQ(html.output.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.output.find("data-n=\"compute\""), std::string::npos);
  EXPECT_NE(html.output.find("<title>compute (6 samples, 66.67%)</title>"), std::string::npos);
  auto svg = runReport(runFlame, {path, "--off-cpu"}, ".svg");
  EXPECT_EQ(svg.output.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.output.find("futex_wait (800 ns, 100.00%)"), std::string::npos);
  auto forced = runReport(runFlame, {path, "--format", "svg"}, ".out");
  EXPECT_EQ(forced.output.rfind("<?xml", 0), 0u);
}

TEST_F(FlameTest, BadUsage) {
  EXPECT_EQ(runFlame({path, "--off-cpu", "--locks"}), 2);
  EXPECT_EQ(runFlame({path, "--format", "png"}), 2);
}

}  // namespace
}  // namespace incise::analyzer
