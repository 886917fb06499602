// --where NAME=VALUE and --by context:NAME on a built trace whose context
// changes and schedule are known: top keeps the samples whose thread held
// the values (a list, !=, two conditions, a thread without reads in none),
// offcpu the off-CPU spans, --by context:NAME counts per value, a lock
// report and the latency report keep their rows by the same rule, and a
// NAME the trace lacks is a usage error naming the contexts it has.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "tests/analyzer/reports/report_runner.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
int runTop(const std::vector<std::string>& args);
int runOffcpu(const std::vector<std::string>& args);
int runWaits(const std::vector<std::string>& args);
int runLatency(const std::vector<std::string>& args);
int runSched(const std::vector<std::string>& args);
int runFlame(const std::vector<std::string>& args);

namespace {
using testing::runReportJson;
using testing::TraceBuilder;

// Thread 101: request 7 from its first read at 0, 10 samples 1-10 µs,
// blocked 12-18 µs (its switch-out at 12 µs read 7 last), request 8 from
// 19 µs (halfway through its run 18-20 µs before the first read of 8 at
// 20 µs), 6 samples 20-25 µs and a lock wait at 21 µs. Thread 102: value
// 0 from 0.5 µs, 5 samples and a lock wait. Thread 103 never reads the
// context (another program): 3 samples.
class WhereTest : public ::testing::Test {
 protected:
  void SetUp() override {
    b.thread(101, "worker");
    b.thread(102, "idle-worker");
    b.thread(103, "other");
    b.context("req", "request_id");
    b.context("conn", "connection");
    uint64_t serve = b.stack({"serve", "main"});
    uint64_t wait = b.stack({"wait", "main"});
    b.sched(0, 0, 0, 0, 101);
    b.contextChange(0, 101, 0, 7);
    b.contextChange(500, 102, 0, 0);
    for (uint64_t t = 1000; t <= 10'000; t += 1000) b.sample(t, 101, serve, 0);
    for (uint64_t t = 1500; t <= 5500; t += 1000) b.sample(t, 102, wait, 1);
    for (uint64_t t = 2200; t <= 4200; t += 1000) b.sample(t, 103, serve, 2);
    b.sched(12'000, 0, 101, /*prev_state=*/1, 0, wait);
    b.sched(18'000, 0, 0, 0, 101);
    b.contextChange(20'000, 101, 0, 8, /*since=*/12'000);
    for (uint64_t t = 20'000; t <= 25'000; t += 1000) b.sample(t, 101, serve, 0);
    b.lock(101, 0x7000, 21'000, 21'500, 0, wait, format::kLockContended);
    b.lock(102, 0x7000, 3'000, 3'900, 0, wait, format::kLockContended);
    b.latency(22'000, 101, format::LatencySource::kFunction, 1, 700);
    b.latency(4'000, 102, format::LatencySource::kFunction, 1, 300);
    b.latencyProbe(format::LatencySource::kFunction, 1, "handle");
    b.setLockMode("contended");
    b.setEnd(30'000);
    auto written = b.write();
    ASSERT_TRUE(written) << written.error().message();
    path = *written;
  }

  uint64_t topSamples(std::vector<std::string> args) {
    args.insert(args.begin(), path);
    nlohmann::json doc = runReportJson(runTop, args);
    EXPECT_FALSE(doc.contains("exit_code")) << doc.dump();
    return doc.value("samples", uint64_t{0});
  }

  TraceBuilder b;
  std::string path;
};

TEST_F(WhereTest, TopKeepsTheSamplesOfThreadsHoldingTheValues) {
  EXPECT_EQ(topSamples({}), 24u);
  EXPECT_EQ(topSamples({"--where", "req=7"}), 10u);
  EXPECT_EQ(topSamples({"--where", "req=8"}), 6u);
  EXPECT_EQ(topSamples({"--where", "req=7,8"}), 16u);
  EXPECT_EQ(topSamples({"--where", "req=0"}), 5u);
  // Thread 103's value is unknown: it is in neither form.
  EXPECT_EQ(topSamples({"--where", "req!=7"}), 11u);
  EXPECT_EQ(topSamples({"--where", "req!=7", "--where", "req!=0"}), 6u);
  EXPECT_EQ(topSamples({"--where", "req=7,8", "--tid", "102"}), 0u);
  EXPECT_EQ(topSamples({"--where", "req=7", "--time", "..0.000005"}), 5u);
  // No thread read `conn`: nothing held any value of it.
  EXPECT_EQ(topSamples({"--where", "conn=0"}), 0u);
}

TEST_F(WhereTest, TheHeaderSaysWhatWasKept) {
  nlohmann::json doc = runReportJson(runTop, {path, "--where", "req=8,7", "--where", "conn!=0x10"});
  ASSERT_FALSE(doc.contains("exit_code")) << doc.dump();
  EXPECT_EQ(doc["header"]["where"], nlohmann::json::array({"req=7,8", "conn!=16"}));
}

TEST_F(WhereTest, TopByContextCountsSamplesPerValue) {
  nlohmann::json doc = runReportJson(runTop, {path, "--by", "context:req"});
  ASSERT_FALSE(doc.contains("exit_code")) << doc.dump();
  EXPECT_EQ(doc["by"], "context:req");
  EXPECT_EQ(doc["samples"], 24);
  std::map<std::string, uint64_t> samples;
  for (const auto& row : doc["values"]) {
    samples[row["value"].dump()] = row["samples"];
    ASSERT_FALSE(row["functions"].empty());
  }
  EXPECT_EQ(samples, (std::map<std::string, uint64_t>{{"7", 10}, {"8", 6}, {"0", 5}, {"null", 3}}));
  EXPECT_EQ(doc["values"][0]["value"], 7);  // most samples first
  EXPECT_EQ(doc["values"][0]["functions"][0]["name"], "serve");
}

TEST_F(WhereTest, OffcpuKeepsTheSpansOfThreadsHoldingTheValues) {
  nlohmann::json seven = runReportJson(runOffcpu, {path, "--where", "req=7"});
  ASSERT_FALSE(seven.contains("exit_code")) << seven.dump();
  EXPECT_EQ(seven["off_cpu_ns"]["blocked"], 6000);
  nlohmann::json eight = runReportJson(runOffcpu, {path, "--where", "req=8"});
  EXPECT_EQ(eight["off_cpu_ns"]["blocked"], 0);
  nlohmann::json by = runReportJson(runOffcpu, {path, "--by", "context:req"});
  ASSERT_EQ(by["values"].size(), 1u) << by.dump();
  EXPECT_EQ(by["values"][0]["value"], 7);
  EXPECT_EQ(by["values"][0]["blocked_ns"], 6000);
  EXPECT_EQ(by["values"][0]["switches"], 1);
}

// Thread 201 serves request 7, blocks at 2 µs, is woken at 5 µs and runs
// at 7 µs (2 µs in the runqueue), takes request 8 at 9 µs, is preempted at
// 10 µs and runs again at 13 µs (3 µs): each wait is its value's.
TEST(WhereRunqueue, OffcpusRunqueueLatencyIsThatOfThreadsHoldingTheValues) {
  TraceBuilder t;
  t.thread(201, "worker");
  t.thread(202, "waker");
  t.context("req", "request_id");
  t.sched(0, 0, 0, 0, 201);
  t.contextChange(100, 201, 0, 7);
  t.sched(2'000, 0, 201, /*prev_state=*/1, 202);
  t.wakeup(5'000, 202, 201);
  t.sched(7'000, 0, 202, /*prev_state=*/1, 201);
  t.contextChange(9'000, 201, 0, 8, /*since=*/8'000);
  t.sched(10'000, 0, 201, /*prev_state=*/0, 202);
  t.sched(13'000, 0, 202, /*prev_state=*/1, 201);
  t.setEnd(20'000);
  auto path = t.write();
  ASSERT_TRUE(path) << path.error().message();
  auto waitsOf201 = [&](std::vector<std::string> args) {
    args.insert(args.begin(), *path);
    nlohmann::json doc = runReportJson(runOffcpu, args);
    EXPECT_FALSE(doc.contains("exit_code")) << doc.dump();
    for (const auto& row : doc["runqueue_latency"])
      if (row["tid"] == 201)
        return std::pair{row["waits"].get<uint64_t>(), row["total_ns"].get<uint64_t>()};
    return std::pair<uint64_t, uint64_t>{0, 0};
  };
  EXPECT_EQ(waitsOf201({}), (std::pair<uint64_t, uint64_t>{2, 5'000}));
  EXPECT_EQ(waitsOf201({"--where", "req=7"}), (std::pair<uint64_t, uint64_t>{1, 2'000}));
  EXPECT_EQ(waitsOf201({"--where", "req=8"}), (std::pair<uint64_t, uint64_t>{1, 3'000}));
  EXPECT_EQ(waitsOf201({"--where", "req=9"}), (std::pair<uint64_t, uint64_t>{0, 0}));

  nlohmann::json by = runReportJson(runOffcpu, {*path, "--by", "context:req"});
  ASSERT_FALSE(by.contains("exit_code")) << by.dump();
  using Waits = std::tuple<uint64_t, uint64_t, uint64_t>;
  std::map<std::string, Waits> per_value;
  for (const auto& row : by["values"]) {
    per_value[row["value"].dump()] = {row["runqueue_waits"], row["runqueue_ns"],
                                      row["runqueue_max_ns"]};
  }
  // Thread 202 never reads the context: its waits are the unknown value's.
  EXPECT_EQ(per_value,
            (std::map<std::string, Waits>{
                {"7", {1, 2'000, 2'000}}, {"8", {1, 3'000, 3'000}}, {"null", {0, 0, 0}}}))
      << by.dump();
  nlohmann::json held =
      runReportJson(runOffcpu, {*path, "--by", "context:req", "--where", "req=8"});
  ASSERT_EQ(held["values"].size(), 1u) << held.dump();
  EXPECT_EQ(held["values"][0]["runqueue_ns"], 3'000);
}

// Thread 101 ran 0-12 µs and 18-30 µs, blocked between: 7 holds until
// 19 µs (the change placed halfway through 18-20 µs), 8 from there.
TEST_F(WhereTest, SchedCutsAThreadsStatesWhereItsValueChanges) {
  auto thread101 = [&](std::vector<std::string> args) {
    args.insert(args.begin(), path);
    nlohmann::json doc = runReportJson(runSched, args);
    EXPECT_FALSE(doc.contains("exit_code")) << doc.dump();
    for (const auto& row : doc["threads"])
      if (row["tid"] == 101) return row;
    return nlohmann::json();
  };
  nlohmann::json all = thread101({});
  EXPECT_EQ(all["running_ns"], 24'000);
  EXPECT_EQ(all["blocked_ns"], 6'000);
  nlohmann::json seven = thread101({"--where", "req=7"});
  EXPECT_EQ(seven["running_ns"], 13'000);
  EXPECT_EQ(seven["blocked_ns"], 6'000);
  EXPECT_EQ(seven["voluntary_switches"], 1);
  nlohmann::json eight = thread101({"--where", "req=8"});
  EXPECT_EQ(eight["running_ns"], 11'000);
  EXPECT_EQ(eight["blocked_ns"], 0);
  EXPECT_EQ(eight["voluntary_switches"], 0);
  EXPECT_EQ(thread101({"--where", "req=0"}), nlohmann::json());
  nlohmann::json windowed = thread101({"--where", "req=8", "--time", "..0.000025"});
  EXPECT_EQ(windowed["running_ns"], 6'000);

  nlohmann::json by = runReportJson(runSched, {path, "--by", "context:req"});
  ASSERT_FALSE(by.contains("exit_code")) << by.dump();
  EXPECT_EQ(by["by"], "context:req");
  ASSERT_EQ(by["values"].size(), 2u) << by.dump();
  EXPECT_EQ(by["values"][0]["value"], 7);  // most running first
  EXPECT_EQ(by["values"][0]["running_ns"], 13'000);
  EXPECT_EQ(by["values"][0]["blocked_ns"], 6'000);
  EXPECT_EQ(by["values"][0]["threads"], nlohmann::json::array({101}));
  EXPECT_EQ(by["values"][1]["value"], 8);
  EXPECT_EQ(by["values"][1]["running_ns"], 11'000);
  nlohmann::json both = runReportJson(runSched, {path, "--by", "context:req", "--where", "req!=7"});
  ASSERT_EQ(both["values"].size(), 1u) << both.dump();
  EXPECT_EQ(both["values"][0]["value"], 8);
  EXPECT_EQ(runReportJson(runSched, {path, "--by", "context:user"})["exit_code"], 2);
  EXPECT_EQ(runReportJson(runSched, {path, "--by", "cpu"})["exit_code"], 2);
}

TEST_F(WhereTest, WaitsAndLatencyKeepTheRowsOfThreadsHoldingTheValues) {
  auto waits = [&](const std::string& where) {
    nlohmann::json doc = runReportJson(runWaits, {path, "--where", where});
    EXPECT_FALSE(doc.contains("exit_code")) << doc.dump();
    uint64_t count = 0;
    for (const auto& group : doc["groups"]) count += group["wait_ns"]["count"].get<uint64_t>();
    return count;
  };
  EXPECT_EQ(waits("req=8"), 1u);
  EXPECT_EQ(waits("req=0"), 1u);
  EXPECT_EQ(waits("req=7"), 0u);
  auto calls = [&](const std::string& where) {
    nlohmann::json doc = runReportJson(runLatency, {path, "--where", where});
    EXPECT_FALSE(doc.contains("exit_code")) << doc.dump();
    uint64_t count = 0;
    for (const auto& row : doc["groups"]) count += row["count"].get<uint64_t>();
    return count;
  };
  EXPECT_EQ(calls("req=8"), 1u);
  EXPECT_EQ(calls("req=7,8,0"), 2u);
}

TEST_F(WhereTest, WaitsAndLatencyByContextSplitPerValue) {
  nlohmann::json waits = runReportJson(runWaits, {path, "--by", "context:req"});
  ASSERT_FALSE(waits.contains("exit_code")) << waits.dump();
  std::map<std::string, uint64_t> wait_ns;
  for (const auto& group : waits["groups"])
    wait_ns[group["value"].dump()] += group["wait_ns"]["total"].get<uint64_t>();
  EXPECT_EQ(wait_ns, (std::map<std::string, uint64_t>{{"8", 500}, {"0", 900}}));
  nlohmann::json latency = runReportJson(runLatency, {path, "--by", "context:req"});
  ASSERT_FALSE(latency.contains("exit_code")) << latency.dump();
  std::map<std::string, uint64_t> call_ns;
  for (const auto& group : latency["groups"])
    call_ns[group["value"].dump()] += group["total_ns"].get<uint64_t>();
  EXPECT_EQ(call_ns, (std::map<std::string, uint64_t>{{"8", 700}, {"0", 300}}));
  EXPECT_EQ(runReportJson(runWaits, {path, "--by", "context:user"})["exit_code"], 2);
  EXPECT_EQ(runReportJson(runLatency, {path, "--by", "context:user"})["exit_code"], 2);
}

// Each value's stacks under a root frame: the samples, the blocked span
// (at its switch-out) and the lock waits of threads holding it.
TEST_F(WhereTest, FlameByContextPutsEachValueUnderARootFrame) {
  auto roots = [&](std::vector<std::string> args) {
    args.insert(args.begin(), path);
    nlohmann::json doc = runReportJson(runFlame, args);
    EXPECT_FALSE(doc.contains("exit_code")) << doc.dump();
    std::map<std::string, uint64_t> weight;
    for (const auto& stack : doc["stacks"])
      weight[stack["frames"][0].get<std::string>()] += stack["weight"].get<uint64_t>();
    return weight;
  };
  using Weights = std::map<std::string, uint64_t>;
  EXPECT_EQ(roots({"--by", "context:req"}),
            (Weights{{"req=7", 10}, {"req=8", 6}, {"req=0", 5}, {"req=?", 3}}));
  EXPECT_EQ(roots({"--by", "context:req", "--off-cpu"}), (Weights{{"req=7", 6000}}));
  EXPECT_EQ(roots({"--by", "context:req", "--locks"}), (Weights{{"req=8", 500}, {"req=0", 900}}));
  EXPECT_EQ(roots({"--by", "context:req", "--where", "req=8"}), (Weights{{"req=8", 6}}));
  EXPECT_EQ(runReportJson(runFlame, {path, "--by", "module"})["exit_code"], 2);
}

TEST_F(WhereTest, ANameTheTraceLacksIsAUsageErrorNamingTheContextsItHas) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{path, "--where", "user=1"},
        std::vector<std::string>{path, "--by", "context:user"}}) {
    ::testing::internal::CaptureStderr();
    nlohmann::json doc = runReportJson(runTop, args);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(doc["exit_code"], 2) << args[2];
    EXPECT_NE(err.find("no context 'user' (it has: req, conn)"), std::string::npos) << err;
  }
  EXPECT_EQ(runReportJson(runOffcpu, {path, "--where", "user=1"})["exit_code"], 2);
  EXPECT_EQ(runReportJson(runTop, {path, "--where", "req=x"})["exit_code"], 2);
}

}  // namespace
}  // namespace incise::analyzer
