// The Chrome trace export is valid JSON; per thread its running, runnable
// and blocked slices add up to exactly what `incise sched` reports; lock
// waits and holds are paired async slices; samples are instants.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "analyzer/export/chrome_trace_export.h"
#include "tests/analyzer/export/export_test_files.h"
#include "tests/analyzer/reports/report_json_runner.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {

int runSched(const std::vector<std::string>& args);

namespace {

using testing::ExportedFile;
using testing::TraceBuilder;

// ts/dur are µs with three decimals: back to exact ns.
uint64_t nanos(const nlohmann::json& micros) {
  return static_cast<uint64_t>(std::llround(micros.get<double>() * 1000));
}

class ChromeExport : public ::testing::Test {
 protected:
  void SetUp() override {
    t_.thread(101, "worker");
    t_.thread(102, "helper");
    t_.thread(201, "other", /*pid=*/200);
    uint64_t wait = t_.stack({"read", "worker_main"});
    t_.sched(1000, 0, 0, 0, 101);
    t_.sched(5000, 0, 101, 1, 102, wait);  // worker blocks, helper runs
    t_.wakeup(8000, 102, 101);             // worker runnable
    t_.sched(9000, 0, 102, 0, 101);        // helper preempted, worker runs
    t_.sched(15000, 0, 101, 1, 102, wait);
    t_.sched(16000, 1, 0, 0, 201);
    t_.wakeup(17000, 102, 101);
    t_.sched(18000, 1, 201, 0, 101);
    t_.lock(101, 0x7000, 2000, 2500, 4000, t_.stack({"update", "worker_main"}),
            format::kLockContended);
    uint64_t hot = t_.stack({"compute", "worker_main"});
    for (uint64_t time : {1500, 2600, 3100}) t_.sample(time, 101, hot);
    t_.setEnd(20000);
    auto path = t_.write();
    ASSERT_TRUE(path) << path.error().message();
    path_ = *path;
    ASSERT_EQ(file_.run(path_), 0);
    doc_ = nlohmann::json::parse(file_.contents(), nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(doc_.is_discarded()) << file_.contents();
  }

  TraceBuilder t_;
  std::string path_;
  ExportedFile file_{"chrome"};
  nlohmann::json doc_;
};

TEST_F(ChromeExport, StateSlicesAddUpToTheSchedReport) {
  std::map<uint64_t, std::map<std::string, uint64_t>> spans;  // tid -> state -> ns
  for (const auto& e : doc_["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "sched") {
      spans[e["tid"].get<uint64_t>()][e["name"].get<std::string>()] += nanos(e["dur"]);
    }
  }
  nlohmann::json sched;
  ASSERT_EQ(testing::runReportJson(runSched, {path_, "--limit", "0"}, sched), 0);
  ASSERT_EQ(sched["threads"].size(), 3u);
  for (const auto& thread : sched["threads"]) {
    uint64_t tid = thread["tid"];
    SCOPED_TRACE("tid " + std::to_string(tid));
    EXPECT_EQ(spans[tid]["running"], thread["running_ns"].get<uint64_t>());
    EXPECT_EQ(spans[tid]["runnable"], thread["runnable_ns"].get<uint64_t>());
    EXPECT_EQ(spans[tid]["blocked"], thread["blocked_ns"].get<uint64_t>());
  }
  // And the numbers are the ones the schedule implies, not zeros on both sides.
  EXPECT_EQ(spans[101]["running"], (5000 - 1000) + (15000 - 9000) + (20000 - 18000));
  EXPECT_EQ(spans[101]["blocked"], (8000 - 5000) + (17000 - 15000));
  EXPECT_EQ(spans[101]["runnable"], (9000 - 8000) + (18000 - 17000));
}

TEST_F(ChromeExport, StateSlicesOfAThreadNeverOverlap) {
  std::map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> by_tid;
  for (const auto& e : doc_["traceEvents"]) {
    if (e["ph"] == "X") {
      uint64_t start = nanos(e["ts"]);
      by_tid[e["tid"].get<uint64_t>()].emplace_back(start, start + nanos(e["dur"]));
    }
  }
  for (auto& [tid, slices] : by_tid) {
    std::sort(slices.begin(), slices.end());
    for (size_t i = 1; i < slices.size(); ++i) {
      EXPECT_LE(slices[i - 1].second, slices[i].first) << "tid " << tid;
    }
  }
}

TEST_F(ChromeExport, LocksSamplesAndNames) {
  std::map<std::string, int> begins, ends;
  std::map<uint64_t, uint64_t> begin_time;
  int instants = 0;
  std::map<std::pair<uint64_t, uint64_t>, std::string> thread_names;
  std::map<uint64_t, std::string> process_names;
  for (const auto& e : doc_["traceEvents"]) {
    if (e["ph"] == "b") {
      begins[e["name"]] += 1;
      begin_time[e["id"]] = nanos(e["ts"]);
    } else if (e["ph"] == "e") {
      ends[e["name"]] += 1;
      uint64_t start = begin_time.at(e["id"]);
      uint64_t length = nanos(e["ts"]) - start;
      EXPECT_EQ(length, e["name"] == "wait 0x7000" ? 500u : 1500u) << e.dump();
    } else if (e["ph"] == "i") {
      ++instants;
      EXPECT_EQ(e["name"], "compute");
      EXPECT_EQ(e["args"]["stack"], "compute <- worker_main");
    } else if (e["ph"] == "M" && e["name"] == "thread_name") {
      thread_names[{e["pid"], e["tid"]}] = e["args"]["name"];
    } else if (e["ph"] == "M" && e["name"] == "process_name") {
      process_names[e["pid"]] = e["args"]["name"];
    }
  }
  EXPECT_EQ(begins, (std::map<std::string, int>{{"hold 0x7000", 1}, {"wait 0x7000", 1}}));
  EXPECT_EQ(ends, begins);
  EXPECT_EQ(instants, 3);
  using Thread = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(thread_names[Thread(TraceBuilder::kPid, 101)], "worker");
  EXPECT_EQ(thread_names[Thread(TraceBuilder::kPid, 102)], "helper");
  EXPECT_EQ(thread_names[Thread(200, 201)], "other");
  EXPECT_EQ(process_names.count(TraceBuilder::kPid), 1u);
}

TEST(MicrosText, KeepsNanoseconds) {
  EXPECT_EQ(microsText(0), "0.000");
  EXPECT_EQ(microsText(1), "0.001");
  EXPECT_EQ(microsText(1234567), "1234.567");
}

}  // namespace
}  // namespace incise::analyzer
