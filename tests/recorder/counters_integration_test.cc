// -e EVENT, -c N and --counters with real software perf events, against
// fault_story's own fault counts (getrusage): samples of page-faults land in
// the functions that faulted, a page-faults counter read with cpu-clock
// samples sums to the process's faults, and a hardware event on a machine
// without a PMU is refused before any file is written.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/recorder/recorder_test_support.h"
#include "tests/workloads/workload_run.h"

namespace incise::testing {
namespace {

const std::string kFaultStory = std::string(INCISE_WORKLOADS_DIR) + "/fault_story";

WorkloadRun recordFaultStory(const std::string& trace, std::vector<std::string> recorder_args,
                             const std::vector<std::string>& args) {
  std::vector<std::string> all = {"-o", trace, "--no-sched", "--locks", "off"};
  all.insert(all.end(), recorder_args.begin(), recorder_args.end());
  all.push_back("--");
  all.push_back(kFaultStory);
  all.insert(all.end(), args.begin(), args.end());
  return run_workload(INCISE_RECORD_BIN, all);
}

nlohmann::json topJson(const std::vector<std::string>& args) {
  WorkloadRun top = run_workload(INCISE_ANALYZER_BIN, args);
  EXPECT_EQ(top.exit_code, 0) << top.raw_stdout;
  return nlohmann::json::parse(top.raw_stdout, nullptr, /*allow_exceptions=*/false);
}

const nlohmann::json* rowNamed(const nlohmann::json& top, const std::string& name) {
  for (const nlohmann::json& row : top["rows"])
    if (row["name"] == name) return &row;
  return nullptr;
}

// The recorder through the shell, its messages captured.
ShellRun runRecorder(const std::string& args) {
  return run_shell(std::string(INCISE_RECORD_BIN) + " " + args);
}

bool hardwarePmuSamples() {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.sample_period = 1000000;
  attr.disabled = 1;
  int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0));
  if (fd < 0) return false;
  close(fd);
  return true;
}

TEST(Counters, EveryPageFaultIsASampleOfTheFunctionThatTookIt) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("page_faults_c1.trace");
  WorkloadRun run = recordFaultStory(path, {"-e", "page-faults", "-c", "1"},
                                     {"--pages-a", "1500", "--pages-b", "500", "--burn-ms", "20"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  EXPECT_EQ(trace.reader().header().options.sample_event, "page-faults");
  EXPECT_EQ(trace.reader().header().options.sample_period, 1u);
  ASSERT_EQ(trace.lost(format::LostSource::kCpuSamples), 0u);

  const std::string pid = std::to_string(run.number("pid"));
  nlohmann::json top = topJson({"top", path, "--json", "--limit", "0", "--pid", pid});
  ASSERT_FALSE(top.is_discarded());
  EXPECT_EQ(top["unit"], "page-faults");
  for (const std::string function : {"touch_pages_a", "touch_pages_b"}) {
    const nlohmann::json* row = rowNamed(top, function);
    ASSERT_NE(row, nullptr) << function << " not in " << top.dump();
    uint64_t recorded = (*row)["self_events"].get<uint64_t>();
    // Each fresh page is one fault taken in the function; the program's
    // getrusage count across the call adds what the call's own code or
    // stack took, and the kernel's page-faults event also counts a fault it
    // then retried, which getrusage does not: one each at most here.
    uint64_t pages = run.number("pages." + function);
    uint64_t counted = run.number("minor_faults." + function);
    EXPECT_GE(recorded, pages) << function;
    EXPECT_LE(recorded, counted + 2) << function << " (" << pages << " pages)";
  }
}

TEST(Counters, PageFaultCountsOfTheSamplesSumToTheProcessFaults) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("counters_page_faults.trace");
  WorkloadRun run = recordFaultStory(path, {"-F", "999", "--counters", "page-faults"},
                                     {"--pages-a", "3000", "--pages-b", "1000"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  ASSERT_EQ(trace.reader().header().options.counters, std::vector<std::string>{"page-faults"});

  const std::string pid = std::to_string(run.number("pid"));
  nlohmann::json top = topJson({"top", path, "--json", "--counters", "--limit", "0", "--pid", pid});
  ASSERT_FALSE(top.is_discarded());
  EXPECT_EQ(top["unit"], "samples");
  uint64_t self_sum = 0;
  for (const nlohmann::json& row : top["rows"])
    self_sum += row["counters"]["page-faults"]["self"].get<uint64_t>();
  // Every count is charged to one sample's leaf: the functions' self counts
  // are the counter's total, and that is the process's faults but those
  // after its thread's last sample (burn_after_faults leaves none).
  EXPECT_EQ(self_sum, top["counters"]["page-faults"].get<uint64_t>());
  double minor = static_cast<double>(run.number("minor_faults.process"));
  EXPECT_NEAR(static_cast<double>(self_sum), minor, 0.10 * minor) << top.dump();
  // The faults are charged to the samples that follow them: most to the
  // function that took most of them.
  const nlohmann::json* a = rowNamed(top, "touch_pages_a");
  const nlohmann::json* b = rowNamed(top, "touch_pages_b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_GT((*a)["counters"]["page-faults"]["self"].get<uint64_t>(),
            (*b)["counters"]["page-faults"]["self"].get<uint64_t>());
}

TEST(Counters, PerCpuGroupsOfTheWholeMachineCount) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("counters_all.trace");
  // fault_story runs once the recorder says it records (every event open),
  // and the recorder stops at SIGINT once it is done: each of its faults
  // is counted on the cpu it took it on and charged to that cpu's next sample.
  std::string log = path + ".log";
  std::string command =
      std::string(INCISE_RECORD_BIN) + " -o " + path +
      " -a -F 999 --no-sched --counters context-switches,page-faults 2> " + log +
      " & recorder=$!; for i in $(seq 600); do grep -q ' recording ' " + log +
      " && break; sleep 0.1; done; " + kFaultStory +
      " --pages-a 2000 --pages-b 0 --burn-ms 100 > /dev/null; kill -INT $recorder;"
      " wait $recorder";
  ASSERT_EQ(std::system(command.c_str()), 0);
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  uint64_t switches = 0, faults = 0;
  for (const format::CpuSample& s : trace.rows<format::CpuSample>()) {
    switches += s.counter0;
    faults += s.counter1;
  }
  EXPECT_GT(switches, 0u);
  EXPECT_GE(faults, 2000u);
}

TEST(Counters, AHardwareEventWithoutAPmuFailsBeforeAnyFileIsWritten) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("cycles.trace");
  const std::string workload = " -- " + kFaultStory + " --burn-ms 10";
  ShellRun sampled = runRecorder("-o " + path + " -e instructions -d 0.5" + workload);
  if (hardwarePmuSamples()) {
    // A PMU: the event records like any other.
    EXPECT_EQ(sampled.exit_code, 0) << sampled.output;
    EXPECT_TRUE(std::filesystem::exists(path));
    return;
  }
  EXPECT_NE(sampled.exit_code, 0);
  EXPECT_NE(sampled.output.find("-e instructions: a hardware event, and no hardware PMU was found"),
            std::string::npos)
      << sampled.output;
  EXPECT_NE(sampled.output.find("-e cpu-clock"), std::string::npos) << sampled.output;
  EXPECT_FALSE(std::filesystem::exists(path));

  ShellRun counted = runRecorder("-o " + path + " --counters page-faults,cache-misses" + workload);
  EXPECT_NE(counted.exit_code, 0);
  EXPECT_NE(counted.output.find(
                "--counters cache-misses: a hardware event, and no hardware PMU was found"),
            std::string::npos)
      << counted.output;
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Counters, AnUnknownEventIsAUsageErrorListingTheKnownOnes) {
  ShellRun run = runRecorder("-e page-fault -a -d 1 -o /dev/null");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("-e page-fault: unknown event; software events: cpu-clock"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("context-switches (cs)"), std::string::npos) << run.output;
  ShellRun both = runRecorder("-F 99 -c 1000 -a -d 1 -o /dev/null");
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("-c and -F exclude each other"), std::string::npos) << both.output;
}

}  // namespace
}  // namespace incise::testing
