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
#include "tests/analyzer/export/trace_event_checker.h"
#include "tests/analyzer/reports/report_json_runner.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {

int runSched(const std::vector<std::string>& args);

namespace {

using testing::ExportedFile;
using testing::TraceBuilder;

constexpr uint64_t kGoroutine = 18;

// ts/dur are µs on a 1/1024 µs grid: back to exact ns.
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
    // The worker serves request 42 from its first read at 1000.
    t_.context("req", "request_id");
    t_.contextChange(1000, 101, 0, 42);
    for (uint64_t time : {1500, 2600, 3100}) t_.sample(time, 101, hot);
    // A goroutine's sample (a Go program's thread): labelled with its id.
    t_.sample(6000, 102, hot, 0, 1, TraceBuilder::kPid, kGoroutine);
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
      // The stack is in stackFrames, not repeated per sample; a Go
      // program's sample has its goroutine as args, the worker's its request.
      if (e["tid"] == 102) {
        EXPECT_EQ(e["args"], (nlohmann::json{{"goroutine", kGoroutine}}));
      } else {
        EXPECT_EQ(e["args"], (nlohmann::json{{"req", 42}}));
      }
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
  EXPECT_EQ(samples, 4u);
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
  EXPECT_EQ(instants, 4);
  using Thread = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(thread_names[Thread(TraceBuilder::kPid, 101)], "worker");
  EXPECT_EQ(thread_names[Thread(TraceBuilder::kPid, 102)], "helper");
  EXPECT_EQ(thread_names[Thread(200, 201)], "other");
  EXPECT_EQ(process_names.count(TraceBuilder::kPid), 1u);
}

// The strict checker finds nothing: no overlapping slices, every sample in
// a running slice, every track named.
TEST_F(ChromeExport, PassesTheStrictChecker) {
  testing::TraceEventCheck check = testing::checkTraceEvents(doc_);
  EXPECT_TRUE(check.ok()) << check.summary();
  EXPECT_EQ(check.samples, 4u);
  EXPECT_GT(check.slices, 5u);
}

nlohmann::json exportChrome(const std::string& trace, std::vector<std::string> extra = {}) {
  ExportedFile file("chrome");
  EXPECT_EQ(file.run(trace, std::move(extra)), 0);
  return nlohmann::json::parse(file.contents(), nullptr, /*allow_exceptions=*/false);
}

// Slices that meet meet exactly as float64: ts + dur, computed as viewers
// compute it, is the next slice's ts, whatever the ns (here times whose µs
// have three decimals that doubles cannot hold exactly).
TEST(ChromeExportBoundaries, AdjacentSlicesMeetExactlyInFloat64) {
  TraceBuilder b;
  b.thread(101, "a");
  b.thread(102, "b");
  uint64_t time = 1'000'001;
  b.sched(time, 0, 0, 0, 101);
  for (int i = 0; i < 400; ++i) {
    time += 1'234'567 + static_cast<uint64_t>(i) * 7'919;  // ns
    bool first = i % 2 == 0;
    b.sched(time, 0, first ? 101 : 102, 0, first ? 102 : 101);
  }
  b.setEnd(time + 333);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc = exportChrome(*path);
  ASSERT_FALSE(doc.is_discarded());
  std::map<uint64_t, std::vector<std::pair<double, double>>> slices;  // tid -> (ts, dur)
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X")
      slices[e["tid"]].emplace_back(e["ts"].get<double>(), e["dur"].get<double>());
  }
  ASSERT_EQ(slices.size(), 2u);
  size_t adjacent = 0;
  for (auto& [tid, list] : slices) {
    std::sort(list.begin(), list.end());
    for (size_t i = 1; i < list.size(); ++i) {
      // Running, then runnable: each thread's slices tile its time.
      EXPECT_EQ(list[i - 1].first + list[i - 1].second, list[i].first) << "tid " << tid;
      ++adjacent;
    }
  }
  EXPECT_GT(adjacent, 700u);
  testing::TraceEventCheck check = testing::checkTraceEvents(doc);
  EXPECT_TRUE(check.ok()) << check.summary();
}

// A trace of pid 100 also holds the tasks that ran beside its threads on
// their cpus: bystanders, left out by default; with --bystanders they show
// what was seen of them (a run from switch-in to switch-out on one cpu with
// nothing recorded between), never a state stretched to the end.
TEST(ChromeExportBystanders, LeftOutUnlessAskedForAndThenOnlyWhatWasSeen) {
  TraceBuilder b;
  b.setTarget("pid 100");
  b.thread(101, "worker");
  b.unnamedThread(301, /*pid=*/300);
  b.unnamedThread(302, /*pid=*/302);
  b.sched(1000, 0, 0, 0, 101);
  b.sched(2000, 0, 101, 1, 301);  // worker blocks, a bystander runs
  b.wakeup(2400, 301, 101);
  b.sched(2500, 0, 301, 0, 101);  // and gives the cpu back: seen running 500 ns
  b.sched(3000, 0, 101, 1, 302);  // another one runs, never seen again
  b.sample(1500, 101, b.stack({"work"}));
  b.setEnd(10000);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();

  auto statesOf = [](const nlohmann::json& doc) {
    std::map<uint64_t, std::map<std::string, uint64_t>> states;
    for (const auto& e : doc["traceEvents"]) {
      if (e["ph"] == "X") states[e["tid"]][e["name"]] += nanos(e["dur"]);
    }
    return states;
  };
  nlohmann::json plain = exportChrome(*path);
  auto states = statesOf(plain);
  EXPECT_EQ(states.count(301), 0u);
  EXPECT_EQ(states.count(302), 0u);
  EXPECT_EQ(states[101]["running"], 1000u + 500u);
  EXPECT_EQ(states[101]["blocked"], 400u + 7000u);
  EXPECT_EQ(plain["otherData"]["schedule"]["bystander_threads"], 2);
  testing::TraceEventCheck check = testing::checkTraceEvents(plain);
  EXPECT_TRUE(check.ok()) << check.summary();

  nlohmann::json with = exportChrome(*path, {"--bystanders"});
  states = statesOf(with);
  EXPECT_EQ(states[301], (std::map<std::string, uint64_t>{{"running", 500}}));
  EXPECT_EQ(states.count(302), 0u);
  check = testing::checkTraceEvents(with);
  EXPECT_TRUE(check.ok()) << check.summary();
}

// A thread ends at its exit (its last switch-out, TASK_DEAD): nothing is
// drawn for it after that, and sched agrees.
TEST(ChromeExportExit, AThreadEndsAtItsExit) {
  TraceBuilder b;
  b.thread(101, "short");
  b.sched(1000, 0, 0, 0, 101);
  b.sched(3000, 0, 101, /*TASK_DEAD*/ 0x80, 0);
  b.setEnd(50000);
  auto path = b.write();
  ASSERT_TRUE(path);
  nlohmann::json doc = exportChrome(*path);
  uint64_t drawn = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") {
      EXPECT_EQ(e["name"], "running");
      drawn += nanos(e["dur"]);
    }
  }
  EXPECT_EQ(drawn, 2000u);
  nlohmann::json sched;
  ASSERT_EQ(testing::runReportJson(runSched, {*path}, sched), 0);
  ASSERT_EQ(sched["threads"].size(), 1u);
  EXPECT_EQ(sched["threads"][0]["running_ns"], 2000);
  EXPECT_EQ(sched["threads"][0]["blocked_ns"], 0);
  EXPECT_EQ(sched["threads"][0]["exit_ns"], 3000);
}

// Times are exact doubles (1/1024 µs steps) that still give back every ns.
TEST(ChromeTime, ExactDoublesThatKeepNanoseconds) {
  EXPECT_EQ(chromeTimeText(chromeTime(0)), "0");
  EXPECT_EQ(chromeTime(1234567), 1264197u);
  EXPECT_EQ(chromeTimeText(1264197), "1234.5673828125");
  for (uint64_t ns : {uint64_t{1}, uint64_t{999}, uint64_t{1000}, uint64_t{123456789},
                      uint64_t{86'400'000'000'000}, uint64_t{4'000'000'000'001}}) {
    double micros = std::stod(chromeTimeText(chromeTime(ns)));
    EXPECT_EQ(static_cast<uint64_t>(std::llround(micros * 1000)), ns) << ns;
    EXPECT_EQ(micros * kChromeTimeUnitsPerMicro, static_cast<double>(chromeTime(ns))) << ns;
  }
}

}  // namespace
}  // namespace incise::analyzer
