// Records the latency workloads with real BPF (functions through uprobes, C
// and Go, syscalls, block I/O on a loop device) and checks every count and
// every duration against what the workloads measured themselves; and that bad
// --trace and --syscalls arguments are errors that name what is wrong.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "format/event_kinds.h"
#include "tests/recorder/locks_recording.h"

namespace incise::testing {
namespace {

using format::Latency;
using format::LatencySource;

const std::string kLatencyStory = INCISE_WORKLOADS_DIR "/latency_story";
const std::string kGoLatency = INCISE_WORKLOADS_DIR "/go_latency";

uint64_t bucketOf(uint64_t ns) {
  return ns == 0 ? 0 : std::bit_width(ns) - 1;
}

// How many calls the workload measured at or above 2^bucket ns (its
// call.bucket.B lines). A recorded call lies inside the program's measurement
// of it, so this bounds the recorded count from above, whatever the load.
uint64_t measuredAtOrAbove(const Recording& run, uint64_t bucket) {
  uint64_t count = 0;
  for (uint64_t b = bucket; b < 64; ++b) count += run.value("call.bucket." + std::to_string(b));
  return count;
}

std::vector<Latency> rowsOf(const std::vector<Latency>& rows, LatencySource source, uint64_t probe,
                            uint64_t pid) {
  std::vector<Latency> out;
  for (const Latency& row : rows)
    if (row.source == static_cast<uint64_t>(source) && row.probe == probe && row.pid == pid)
      out.push_back(row);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  return out;
}

TEST(LatencyIntegration, EveryCallOfAFunctionAndEveryNanosleepInItsBucket) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record({"--no-sched", "--locks", "off", "-F", "19", "--trace",
                          kLatencyStory + ":timed_call", "--syscalls", "nanosleep"},
                         {kLatencyStory, "--calls", "2000", "--slow-every", "20", "--slow-us",
                          "2000", "--sleeps-1ms", "20", "--sleeps-10ms", "10"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_TRUE(run.has("slow_calls")) << run.workload_stdout;
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<Latency> rows = trace.rows<Latency>();
  uint64_t pid = run.value("pid");

  // The function: 2,000 calls, 100 of them slow (>= 2 ms by the program's clock).
  std::vector<Latency> calls = rowsOf(rows, LatencySource::kFunction, 1, pid);
  ASSERT_EQ(calls.size(), run.value("calls"));
  EXPECT_EQ(run.value("slow_calls"), 100u);
  // Each slow call sleeps 2 ms inside the function; a fast one can take a
  // millisecond too when its thread waits for a CPU, and then the program saw
  // that as well.
  uint64_t at_least_2ms = 0, slow_buckets = 0;
  for (const Latency& call : calls) {
    EXPECT_EQ(call.tid, run.value("tid"));
    EXPECT_EQ(call.weight, 1u);
    at_least_2ms += call.duration >= 2'000'000;
    slow_buckets += call.duration >= (1u << 20);
    if (call.duration < 2'000'000) {
      EXPECT_LE(call.duration, run.value("call_ns.max_fast"));
    }
  }
  EXPECT_GE(at_least_2ms, run.value("slow_calls"));
  EXPECT_LE(slow_buckets, measuredAtOrAbove(run, 20));
  // The stack at entry: the function, then its caller (run), then the C
  // runtime that called main (main tail-calls run, so it has no frame of its own
  // in an optimised build).
  size_t whole = 0;
  for (const Latency& call : calls) {
    auto frames = trace.reader().stacks().frames(call.stack_id);
    if (frames.size() < 3) continue;
    whole += trace.symbolize(static_cast<uint32_t>(pid), frames[0]) == "timed_call" &&
             trace.symbolize(static_cast<uint32_t>(pid), frames[1] - 1).find("run") !=
                 std::string::npos &&
             (trace.stackHasFunction(static_cast<uint32_t>(pid), call.stack_id, "main") ||
              trace.stackHasFunction(static_cast<uint32_t>(pid), call.stack_id,
                                     "__libc_start_call_main"));
  }
  EXPECT_EQ(whole, calls.size());

  // nanosleep (syscall 35): the 100 slow calls sleep through it too, then 20 + 10.
  std::vector<Latency> sleeps = rowsOf(rows, LatencySource::kSyscall, 35, pid);
  ASSERT_EQ(sleeps.size(), 100u + 20u + 10u);
  // In time order: 100 sleeps of 2 ms inside timed_call, then 20 of 1 ms, then 10 of 10 ms.
  std::map<uint64_t, uint64_t> buckets_1ms, buckets_10ms;
  for (size_t i = 100; i < sleeps.size(); ++i) {
    const Latency& s = sleeps[i];
    bool short_one = i < 120;
    EXPECT_GE(s.duration, short_one ? 1'000'000u : 10'000'000u) << i;
    EXPECT_LE(s.duration, run.value(short_one ? "sleep_1ms.max_ns" : "sleep_10ms.max_ns")) << i;
    ++(short_one ? buckets_1ms : buckets_10ms)[bucketOf(s.duration)];
    EXPECT_EQ(s.error, 0u);
  }
  // Each program-measured bucket bounds the recorded one from above, and the
  // nominal bucket from below: a call the program saw in the nominal bucket
  // was recorded in it.
  EXPECT_GE(buckets_1ms[bucketOf(1'000'000)], run.value("sleep_1ms.bucket.19"));
  EXPECT_GE(buckets_10ms[bucketOf(10'000'000)], run.value("sleep_10ms.bucket.23"));
  EXPECT_EQ(bucketOf(10'000'000), 23u);
  EXPECT_EQ(bucketOf(1'000'000), 19u);

  // The names travel in the trace.
  bool named = false;
  for (const auto& probe : trace.reader().metadata().latency_probes)
    named = named || (probe.source == 1 && probe.id == 1 && probe.name == "timed_call");
  EXPECT_TRUE(named);

  // And `incise latency --json` says the same: 2,000 calls, 100 at or above 1 ms.
  std::string json_path = run.trace_path + ".json";
  std::string command = shellQuote(INCISE_ANALYZER_BIN) + " latency " + shellQuote(run.trace_path) +
                        " --json -o " + shellQuote(json_path);
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  nlohmann::json report = nlohmann::json::parse(readAndRemove(json_path));
  bool found = false;
  for (const auto& group : report["groups"]) {
    if (group["name"] != "timed_call") continue;
    found = true;
    EXPECT_EQ(group["kind"], "function");
    EXPECT_EQ(group["count"], 2000u);
    uint64_t slow_calls = 0;
    for (const auto& bucket : group["histogram"])
      if (bucket["from_ns"].get<uint64_t>() >= (1u << 20))
        slow_calls += bucket["count"].get<uint64_t>();
    EXPECT_GE(slow_calls, 100u);
    EXPECT_LE(slow_calls, measuredAtOrAbove(run, 20));
    EXPECT_GE(group["p99_ns"].get<uint64_t>(), 2'000'000u);
  }
  EXPECT_TRUE(found) << report.dump();
}

TEST(LatencyIntegration, GoFunctionsEndAtTheirReturnInstructionsAcrossGoroutines) {
  INCISE_REQUIRE_RECORDING();
  if (access(kGoLatency.c_str(), X_OK) != 0) {
    if (runningInCi()) FAIL() << kGoLatency << " was not built (golang-go missing?)";
    GTEST_SKIP() << kGoLatency << " was not built: no Go toolchain";
  }
  Recording run = record(
      {"--no-sched", "--locks", "off", "-F", "19", "--trace", kGoLatency + ":main.timedCall"},
      {kGoLatency, "--goroutines", "4", "--calls", "200", "--slow-every", "10", "--slow-us",
       "2000"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_TRUE(run.has("calls")) << run.workload_stdout;
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<Latency> calls =
      rowsOf(trace.rows<Latency>(), LatencySource::kFunction, 1, run.value("pid"));
  ASSERT_EQ(calls.size(), run.value("calls"));  // 800: every entry met its return
  // The 80 slow calls sleep 2 ms inside the function; any recorded interval
  // lies inside the program's own measurement of that call.
  uint64_t at_least_2ms = 0, slow_buckets = 0;
  for (const Latency& call : calls) {
    at_least_2ms += call.duration >= 2'000'000;
    slow_buckets += call.duration >= (1u << 20);
    EXPECT_LE(call.duration, run.value("call_ns.max"));
  }
  EXPECT_GE(at_least_2ms, run.value("slow_calls"));
  EXPECT_LE(slow_buckets, measuredAtOrAbove(run, 20));
  bool go = false;
  for (const auto& probe : trace.reader().metadata().latency_probes) go = go || probe.is_go;
  EXPECT_TRUE(go);
}

TEST(LatencyIntegration, AggregateCountsEveryCallInItsBucketWithoutRows) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record({"--no-sched", "--locks", "off", "-F", "19", "--trace",
                          kLatencyStory + ":timed_call", "--aggregate"},
                         {kLatencyStory, "--calls", "2000", "--slow-every", "20", "--slow-us",
                          "2000", "--sleeps-1ms", "0", "--sleeps-10ms", "0"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  EXPECT_TRUE(trace.rows<Latency>().empty());
  uint64_t calls = 0, slow = 0;
  for (const auto& h : trace.rows<format::LatencyHistogram>()) {
    if (h.pid != run.value("pid") || h.probe != 1) continue;
    calls += h.count * h.weight;
    if (h.bucket >= 20) slow += h.count;  // >= 2^20 ns = 1.05 ms
  }
  EXPECT_EQ(calls, 2000u);
  // The 100 sleeping calls, and a fast one only if the program measured it
  // that slow too (preempted for over a millisecond on a loaded box).
  EXPECT_GE(slow, 100u);
  EXPECT_LE(slow, measuredAtOrAbove(run, 20));
}

TEST(LatencyIntegration, SampleKeepsOneCallInNWithWeightN) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record({"--no-sched", "--locks", "off", "-F", "19", "--trace",
                          kLatencyStory + ":timed_call", "--sample", "10"},
                         {kLatencyStory, "--calls", "2000", "--slow-every", "0", "--sleeps-1ms",
                          "0", "--sleeps-10ms", "0"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<Latency> calls =
      rowsOf(trace.rows<Latency>(), LatencySource::kFunction, 1, run.value("pid"));
  // One thread, so one CPU counter most of the time: 1 in 10 per CPU, so
  // between 2000/10 and 2000/10 + one per CPU the thread ran on.
  EXPECT_GE(calls.size(), 200u);
  EXPECT_LE(calls.size(), 200u + static_cast<uint64_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  for (const Latency& call : calls) EXPECT_EQ(call.weight, 10u);
}

// A loop device over a file in /dev/shm, read with O_DIRECT.
class LoopDevice {
 public:
  LoopDevice() {
    backing_ = tempTracePath("loop_backing") + ".img";
    std::FILE* f = std::fopen(backing_.c_str(), "w");
    if (!f) {
      why_not_ = "cannot create " + backing_;
      return;
    }
    std::vector<char> block(1 << 20, 'x');
    for (int i = 0; i < 4; ++i) std::fwrite(block.data(), 1, block.size(), f);
    std::fclose(f);
    std::string out = tempTracePath("losetup") + ".out";
    std::string command =
        "losetup --find --show " + shellQuote(backing_) + " >" + shellQuote(out) + " 2>&1";
    int status = std::system(command.c_str());
    std::string text = readAndRemove(out);
    if (status != 0) {
      why_not_ = "losetup failed: " + text;
      return;
    }
    device_ = text.substr(0, text.find('\n'));
  }
  ~LoopDevice() {
    if (!device_.empty()) std::system(("losetup -d " + shellQuote(device_)).c_str());
    std::filesystem::remove(backing_);
  }
  const std::string& device() const { return device_; }
  const std::string& whyNot() const { return why_not_; }

 private:
  std::string backing_, device_, why_not_;
};

TEST(LatencyIntegration, BlockIoRequestsOfALoopDeviceWithDeviceBytesAndSubmitter) {
  INCISE_REQUIRE_RECORDING();
  LoopDevice loop;
  if (loop.device().empty()) {
    if (runningInCi()) FAIL() << "CI=true but no loop device: " << loop.whyNot();
    GTEST_SKIP() << "no loop device for O_DIRECT block I/O: " << loop.whyNot();
  }
  struct stat info {};
  ASSERT_EQ(stat(loop.device().c_str(), &info), 0);
  uint64_t dev = (uint64_t{major(info.st_rdev)} << 20) | minor(info.st_rdev);
  Recording run =
      record({"--no-sched", "--locks", "off", "-F", "19", "--block-io"},
             {kLatencyStory, "--calls", "0", "--sleeps-1ms", "0", "--sleeps-10ms", "0",
              "--block-device", loop.device(), "--block-ios", "200", "--block-bytes", "4096"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr << run.workload_stdout;
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<Latency> ios =
      rowsOf(trace.rows<Latency>(), LatencySource::kBlockIo, dev, run.value("pid"));
  ASSERT_EQ(ios.size(), run.value("block.ios"));
  uint64_t bytes = 0;
  for (const Latency& io : ios) {
    bytes += io.bytes;
    EXPECT_EQ(io.tid, run.value("tid"));
    EXPECT_EQ(io.detail, static_cast<uint64_t>(format::BlockOp::kRead));
    EXPECT_LE(io.duration, run.value("block.max_ns"));
    EXPECT_NE(io.stack_id, 0u);
  }
  EXPECT_EQ(bytes, run.value("block.bytes"));
  std::string name = loop.device().substr(loop.device().rfind('/') + 1);
  bool named = false;
  for (const auto& probe : trace.reader().metadata().latency_probes)
    named = named || (probe.source == 3 && probe.id == dev && probe.name == name);
  EXPECT_TRUE(named) << name;
}

// The recorder's own errors, before anything is recorded.
std::string recordError(const std::vector<std::string>& options, int* status) {
  Recording run =
      record(options, {kLatencyStory, "--calls", "1", "--sleeps-1ms", "0", "--sleeps-10ms", "0"});
  std::filesystem::remove(run.trace_path);
  *status = run.exit_code;
  return run.recorder_stderr;
}

TEST(LatencyIntegration, BadProbesAreErrorsThatNameThem) {
  INCISE_REQUIRE_RECORDING();
  int status = 0;
  std::string text = recordError({"--trace", "/no/such/app:main"}, &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(text.find("/no/such/app"), std::string::npos) << text;
  text = recordError({"--trace", kLatencyStory + ":no_such_function"}, &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(text.find("no symbol 'no_such_function'"), std::string::npos) << text;
  text = recordError({"--syscalls", "read,not_a_syscall"}, &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(text.find("unknown syscall 'not_a_syscall'"), std::string::npos) << text;
  // +2: inside the first or second instruction whether the function opens with
  // endbr64 (4 bytes) or push %rbp (1) and mov %rsp,%rbp (3).
  text = recordError({"--trace", kLatencyStory + ":timed_call+2"}, &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(text.find("inside an instruction"), std::string::npos) << text;
}

TEST(LatencyIntegration, AnInstructionTheKernelRefusesIsAnErrorNamingTheFunction) {
  INCISE_REQUIRE_RECORDING();
  // glibc's pthread_spin_lock starts with `lock decl (%rdi)`: x86 uprobes refuse it.
  std::string libc;
  for (const char* path :
       {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"})
    if (access(path, R_OK) == 0) libc = path;
  if (libc.empty()) GTEST_SKIP() << "no Debian libc at the usual path";
  int status = 0;
  std::string text = recordError({"--trace", libc + ":pthread_spin_lock"}, &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(text.find("pthread_spin_lock"), std::string::npos) << text;
  EXPECT_NE(text.find("cannot probe the instruction"), std::string::npos) << text;
}

TEST(LatencyIntegration, KernelFunctionsSaySoWhenFentryIsRefusedAndTheRestIsRecorded) {
  INCISE_REQUIRE_RECORDING();
  Recording run =
      record({"--no-sched", "--locks", "off", "-F", "19", "--trace", "kernel:do_nanosleep",
              "--syscalls", "nanosleep"},
             {kLatencyStory, "--calls", "0", "--sleeps-1ms", "3", "--sleeps-10ms", "0"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<Latency> rows = trace.rows<Latency>();
  EXPECT_EQ(rowsOf(rows, LatencySource::kSyscall, 35, run.value("pid")).size(), 3u);
  std::vector<Latency> kernel = rowsOf(rows, LatencySource::kFunction, 1, run.value("pid"));
  bool refused = run.recorder_stderr.find("refuses fentry/fexit") != std::string::npos;
  if (refused) {
    EXPECT_TRUE(kernel.empty());
    bool noted = false;
    for (const auto& note : trace.reader().metadata().notes)
      noted = noted || note.find("refuses fentry/fexit") != std::string::npos;
    EXPECT_TRUE(noted);
  } else {
    EXPECT_EQ(kernel.size(), 3u) << run.recorder_stderr;
  }
}

}  // namespace
}  // namespace incise::testing
