// The Chrome trace export is valid JSON with the keys Perfetto's and
// chrome://tracing's importers read; per thread its running, runnable and
// blocked slices add up to exactly what `incise sched` reports; lock waits
// and holds are paired async slices; samples are instants whose "sf" names a
// node of the shared stackFrames tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

  // The frames of an event's "sf", leaf first, following parent links.
  std::vector<std::string> stackOf(const nlohmann::json& event) const {
    std::vector<std::string> frames;
    const nlohmann::json& table = doc_["stackFrames"];
    std::string id = std::to_string(event["sf"].get<uint64_t>());
    for (size_t depth = 0; !id.empty() && depth < 1000; ++depth) {
      const nlohmann::json& frame = table.at(id);
      frames.push_back(frame["name"]);
      id = frame.contains("parent") ? frame["parent"].get<std::string>() : "";
    }
    return frames;
  }

  TraceBuilder t_;
  std::string path_;
  ExportedFile file_{"chrome"};
  nlohmann::json doc_;
};

// Every event has the keys the importers need, typed as they expect; every
// "sf" and every parent link resolves; async begins and ends pair up.
TEST_F(ChromeExport, StructureIsWhatTheImportersRead) {
  ASSERT_TRUE(doc_.is_object());
  // Perfetto's older importers take displayTimeUnit as the unit of ts.
  EXPECT_FALSE(doc_.contains("displayTimeUnit"));
  ASSERT_TRUE(doc_["traceEvents"].is_array());
  ASSERT_TRUE(doc_["stackFrames"].is_object());
  const nlohmann::json& table = doc_["stackFrames"];
  for (const auto& [id, frame] : table.items()) {
    SCOPED_TRACE("frame " + id);
    EXPECT_TRUE(frame["name"].is_string());
    EXPECT_TRUE(frame["category"].is_string());
    if (frame.contains("parent")) {
      ASSERT_TRUE(frame["parent"].is_string());
      ASSERT_TRUE(table.contains(frame["parent"].get<std::string>()));
      // Parents are written before their children, so links cannot loop.
      EXPECT_LT(std::stoull(frame["parent"].get<std::string>()), std::stoull(id));
    }
  }
  std::map<uint64_t, nlohmann::json> open;  // async id -> its begin
  size_t samples = 0;
  for (const auto& e : doc_["traceEvents"]) {
    SCOPED_TRACE(e.dump());
    ASSERT_TRUE(e["ph"].is_string());
    ASSERT_TRUE(e["name"].is_string());
    ASSERT_TRUE(e["pid"].is_number_unsigned());
    ASSERT_TRUE(e["tid"].is_number_unsigned());
    std::string ph = e["ph"];
    if (ph == "M") {
      EXPECT_TRUE(e["name"] == "thread_name" || e["name"] == "process_name");
      EXPECT_TRUE(e["args"]["name"].is_string());
      continue;
    }
    ASSERT_TRUE(e["ts"].is_number());
    EXPECT_GE(e["ts"].get<double>(), 0);
    if (ph == "X") {
      ASSERT_TRUE(e["dur"].is_number());
      EXPECT_GT(e["dur"].get<double>(), 0);
    } else if (ph == "i") {
      ++samples;
      EXPECT_EQ(e["s"], "t");
      ASSERT_TRUE(e["sf"].is_number_unsigned());
      ASSERT_TRUE(table.contains(std::to_string(e["sf"].get<uint64_t>())));
      EXPECT_FALSE(e.contains("args")) << "the stack is in stackFrames, not repeated per sample";
    } else if (ph == "b") {
      EXPECT_TRUE(open.emplace(e["id"].get<uint64_t>(), e).second) << "id reused";
    } else if (ph == "e") {
      auto begin = open.find(e["id"].get<uint64_t>());
      ASSERT_NE(begin, open.end());
      EXPECT_EQ(begin->second["name"], e["name"]);
      EXPECT_EQ(begin->second["cat"], e["cat"]);
      EXPECT_EQ(begin->second["pid"], e["pid"]);
      EXPECT_LE(begin->second["ts"].get<double>(), e["ts"].get<double>());
      open.erase(begin);
    } else {
      ADD_FAILURE() << "unexpected phase " << ph;
    }
  }
  EXPECT_TRUE(open.empty());
  EXPECT_EQ(samples, 3u);
  // One stack, two frames: written once however many samples use it.
  EXPECT_EQ(table.size(), 2u);
}

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
      EXPECT_EQ(stackOf(e), (std::vector<std::string>{"compute", "worker_main"}));
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
