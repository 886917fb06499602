#include <gtest/gtest.h>

#include <map>

#include "tests/analyzer/reports/report_runner.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
int runTop(const std::vector<std::string>& args);

namespace {
using testing::runReport;
using testing::runReportJson;
using testing::TraceBuilder;

// 12 samples: compute 6 and memcpy 3 (both under work), fib 2 (recursive),
// main 1 alone. memcpy lives in libc. Thread 102 has the memcpy samples.
class TopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    b.thread(101, "worker");
    b.thread(102, "copier");
    b.function("memcpy", "libc");
    uint64_t compute = b.stack({"compute", "work", "main"});
    uint64_t copy = b.stack({"memcpy", "work", "main"});
    uint64_t fib = b.stack({"fib", "fib", "main"});
    uint64_t main_only = b.stack({"main"});
    uint64_t t = 0;
    for (int i = 0; i < 6; ++i) b.sample(t += 1000, 101, compute, 0);
    for (int i = 0; i < 3; ++i) b.sample(t += 1000, 102, copy, 1);
    for (int i = 0; i < 2; ++i) b.sample(t += 1000, 101, fib, 0);
    b.sample(t += 1000, 101, main_only, 1);
    auto written = b.write();
    ASSERT_TRUE(written) << written.error().message();
    path = *written;
  }

  static const nlohmann::json* row(const nlohmann::json& doc, const std::string& name) {
    for (const auto& r : doc["rows"]) {
      if (r["name"] == name) return &r;
    }
    return nullptr;
  }

  TraceBuilder b;
  std::string path;
};

TEST_F(TopTest, SelfAndTotalPercentByFunction) {
  nlohmann::json doc = runReportJson(runTop, {path});
  ASSERT_FALSE(doc.contains("exit_code")) << doc.dump();
  EXPECT_EQ(doc["samples"], 12);
  ASSERT_EQ(doc["rows"].size(), 5u);
  // Sorted by self, then total.
  EXPECT_EQ(doc["rows"][0]["name"], "compute");
  EXPECT_EQ(doc["rows"][1]["name"], "memcpy");
  EXPECT_EQ(doc["rows"][2]["name"], "fib");
  EXPECT_EQ(doc["rows"][3]["name"], "main");
  EXPECT_EQ(doc["rows"][4]["name"], "work");
  auto expect = [&](const std::string& name, int self, int total, double self_pct,
                    double total_pct) {
    const nlohmann::json* r = row(doc, name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_EQ((*r)["self_samples"], self) << name;
    EXPECT_EQ((*r)["total_samples"], total) << name;
    EXPECT_DOUBLE_EQ((*r)["self_percent"].get<double>(), self_pct) << name;
    EXPECT_DOUBLE_EQ((*r)["total_percent"].get<double>(), total_pct) << name;
  };
  expect("compute", 6, 6, 50.0, 50.0);
  expect("memcpy", 3, 3, 25.0, 25.0);
  expect("fib", 2, 2, 16.67, 16.67);  // recursion counted once per sample
  expect("main", 1, 12, 8.33, 100.0);
  expect("work", 0, 9, 0.0, 75.0);
  EXPECT_EQ(doc["header"]["events_used"]["cpu_sample"], 12);
  EXPECT_EQ(doc["header"]["percent_lost"], 0.0);
}

TEST_F(TopTest, ByModule) {
  nlohmann::json doc = runReportJson(runTop, {path, "--by", "module"});
  ASSERT_EQ(doc["rows"].size(), 2u);
  EXPECT_EQ(doc["rows"][0]["name"], "app");
  EXPECT_EQ(doc["rows"][0]["self_samples"], 9);
  EXPECT_EQ(doc["rows"][0]["total_samples"], 12);
  EXPECT_EQ(doc["rows"][1]["name"], "libc");
  EXPECT_EQ(doc["rows"][1]["self_samples"], 3);
  EXPECT_DOUBLE_EQ(doc["rows"][1]["total_percent"].get<double>(), 25.0);
}

TEST_F(TopTest, ByLineFallsBackToFunctionAndSaysSo) {
  nlohmann::json doc = runReportJson(runTop, {path, "--by", "line"});
  EXPECT_EQ(doc["rows"][0]["name"], "compute");
  EXPECT_NE(doc["note"].get<std::string>().find("grouped by function"), std::string::npos);
}

TEST_F(TopTest, FiltersByThreadCpuTimeAndComm) {
  nlohmann::json by_tid = runReportJson(runTop, {path, "--tid", "101"});
  EXPECT_EQ(by_tid["samples"], 9);
  EXPECT_DOUBLE_EQ(by_tid["rows"][0]["self_percent"].get<double>(), 66.67);
  EXPECT_EQ(runReportJson(runTop, {path, "--comm", "copier"})["samples"], 3);
  EXPECT_EQ(runReportJson(runTop, {path, "--cpu", "1"})["samples"], 4);
  // Samples are at 1..12 us; 0.000003..0.000005 s keeps 3, 4 and 5 us.
  EXPECT_EQ(runReportJson(runTop, {path, "--time", "0.000003..0.000005"})["samples"], 3);
  EXPECT_EQ(runReportJson(runTop, {path, "--pid", "999"})["samples"], 0);
}

TEST_F(TopTest, TableAndLimit) {
  auto result = runReport(runTop, {path, "--limit", "2"});
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_NE(result.output.find("incise top: " + path), std::string::npos);
  EXPECT_NE(result.output.find("12 samples, 4 distinct stacks; top 2 of 5"), std::string::npos);
  EXPECT_NE(result.output.find("\nSELF%  TOTAL%  SELF  TOTAL  FUNCTION\n"
                               "50.00   50.00     6      6  compute\n"
                               "25.00   25.00     3      3  memcpy\n"),
            std::string::npos)
      << result.output;
}

TEST_F(TopTest, BadUsageIsExitCodeTwo) {
  EXPECT_EQ(runTop({path, "--by", "colour"}), 2);
  EXPECT_EQ(runTop({path, "--time", "3..1"}), 2);
  EXPECT_EQ(runTop({path, "--tid", "x"}), 2);
  EXPECT_EQ(runTop({}), 2);
  EXPECT_EQ(runTop({"/nonexistent.trace"}), 1);
}

TEST_F(TopTest, AnUnknownGroupingNamesEveryGrouping) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(runTop({path, "--by", "colour"}), 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--by 'colour': expected function, module, line, goroutine or context:NAME"),
            std::string::npos)
      << err;
}

TEST(TopLossTest, HeaderWarnsWhenMoreThanOnePercentWasLost) {
  TraceBuilder b;
  uint64_t stack = b.stack({"main"});
  for (int i = 0; i < 12; ++i) b.sample(1000 * (i + 1), 101, stack);
  b.lost(500, format::LostSource::kCpuSamples, 1);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc = runReportJson(runTop, {*path});
  EXPECT_DOUBLE_EQ(doc["header"]["percent_lost"].get<double>(), 7.69);  // 1 of 13
  ASSERT_EQ(doc["header"]["warnings"].size(), 1u);
  EXPECT_NE(doc["header"]["warnings"][0].get<std::string>().find("figures may be low"),
            std::string::npos);
  auto text = testing::runReport(runTop, {*path});
  EXPECT_NE(text.output.find("warning: 7.69% of events were lost"), std::string::npos);
}

}  // namespace
}  // namespace incise::analyzer

namespace incise::analyzer {
namespace {
using testing::runReport;
using testing::runReportJson;
using testing::TraceBuilder;

// -e page-faults: each sample weighs its period, the faults it stands for:
// fault_a 5 + 2, fault_b 3, in 3 samples.
TEST(TopEventsTest, SamplesOfAnEventThatIsNotAClockWeighTheirPeriod) {
  TraceBuilder b;
  b.setSampleEvent("page-faults");
  uint64_t a = b.stack({"fault_a", "main"});
  uint64_t fault_b = b.stack({"fault_b", "main"});
  b.sample(1000, 101, a, 0, 5);
  b.sample(2000, 101, fault_b, 0, 3);
  b.sample(3000, 101, a, 0, 2);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc = runReportJson(runTop, {*path});
  EXPECT_EQ(doc["unit"], "page-faults");
  EXPECT_EQ(doc["samples"], 3);
  EXPECT_EQ(doc["events"], 10);
  ASSERT_EQ(doc["rows"][0]["name"], "fault_a");
  EXPECT_EQ(doc["rows"][0]["self_events"], 7);
  EXPECT_EQ(doc["rows"][0]["self_percent"], 70.0);
  EXPECT_EQ(doc["rows"][1]["self_events"], 3);
  EXPECT_FALSE(doc["rows"][0].contains("self_samples"));
  auto text = runReport(runTop, {*path});
  EXPECT_NE(text.output.find("10 page-faults (events, by sample period) in 3 samples"),
            std::string::npos)
      << text.output;
}

// --counters page-faults,context-switches: counts charged to the sample's
// stack (self at the leaf, total along it).
class TopCountersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    b.setCounters({"page-faults", "context-switches"});
    uint64_t touch = b.stack({"touch", "work", "main"});
    uint64_t wait = b.stack({"wait", "main"});
    b.countedSample(1000, 101, touch, {40, 0});
    b.countedSample(2000, 101, touch, {2, 1});
    b.countedSample(3000, 101, wait, {0, 7});
    b.countedSample(4000, 101, wait, {1, 0});
    auto written = b.write();
    ASSERT_TRUE(written) << written.error().message();
    path = *written;
  }
  TraceBuilder b;
  std::string path;
};

TEST_F(TopCountersTest, CountsPerFunctionSelfAndTotal) {
  nlohmann::json doc = runReportJson(runTop, {path, "--counters"});
  ASSERT_FALSE(doc.contains("exit_code")) << doc.dump();
  EXPECT_EQ(doc["unit"], "samples");
  EXPECT_EQ(doc["counters"]["page-faults"], 43);
  EXPECT_EQ(doc["counters"]["context-switches"], 8);
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : doc["rows"]) rows[row["name"]] = row["counters"];
  EXPECT_EQ(rows["touch"]["page-faults"]["self"], 42);
  EXPECT_EQ(rows["touch"]["context-switches"]["self"], 1);
  EXPECT_EQ(rows["wait"]["page-faults"]["self"], 1);
  EXPECT_EQ(rows["wait"]["context-switches"]["self"], 7);
  EXPECT_EQ(rows["work"]["page-faults"]["self"], 0);
  EXPECT_EQ(rows["work"]["page-faults"]["total"], 42);
  EXPECT_EQ(rows["main"]["page-faults"]["total"], 43);
  EXPECT_EQ(rows["main"]["context-switches"]["total"], 8);
  // Without --counters the rows carry none.
  EXPECT_FALSE(runReportJson(runTop, {path})["rows"][0].contains("counters"));
}

TEST_F(TopCountersTest, TableHasTwoColumnsPerCounter) {
  auto result = runReport(runTop, {path, "--counters", "--limit", "1"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("counters (charged to the stack of the sample that read them): "
                               "page-faults 43, context-switches 8\n"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("SELF%  TOTAL%  SELF  TOTAL  PAGE-FAULTS SELF  TOTAL  "
                               "CONTEXT-SWITCHES SELF  TOTAL  FUNCTION\n"),
            std::string::npos)
      << result.output;
}

TEST(TopCountersErrorsTest, ATraceWithoutCountersIsAUsageError) {
  TraceBuilder b;
  b.sample(1000, 101, b.stack({"main"}));
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(runTop({*path, "--counters"}), 2);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("recorded without incise-record --counters"), std::string::npos) << err;
}

TEST(TopCountersErrorsTest, CounterNamesFromTheTraceAreEscaped) {
  TraceBuilder b;
  b.setCounters({"evil\x1b]0;x\x07"});
  b.setSampleEvent("bad\x1b[31m");
  b.countedSample(1000, 101, b.stack({"main"}), {3});
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  auto result = runReport(runTop, {*path, "--counters"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.find('\x1b'), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find('\x07'), std::string::npos) << result.output;
}

}  // namespace
}  // namespace incise::analyzer
