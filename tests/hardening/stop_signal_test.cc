// Stop signals at any moment: during start-up (handlers are installed
// before anything slow, so a stop never kills the recorder), twice at once
// (as `timeout` delivers them: no data is dropped), three times (the
// recorder skips the symbol tables and says so).
#include "recorder/stop_signals.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <thread>

#include "tests/hardening/child_process.h"
#include "tests/hardening/trace_check.h"
#include "tests/recorder/recorder_test_support.h"

namespace incise::testing {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kMs = 1'000'000;

TEST(StopSignals, SignalsWithinTheGracePeriodAreOneRequest) {
  using namespace recorder;
  resetStopSignalsForTest();
  EXPECT_FALSE(stopRequested());
  noteStopSignal(SIGINT, 1000 * kMs);
  EXPECT_TRUE(stopRequested());
  EXPECT_EQ(stopSignal(), SIGINT);
  noteStopSignal(SIGINT, 1001 * kMs);  // timeout's second delivery
  EXPECT_FALSE(skipRequested());
  noteStopSignal(SIGTERM, 1002 * kMs);  // a third: skip
  EXPECT_TRUE(skipRequested());
  EXPECT_EQ(stopSignal(), SIGINT);

  resetStopSignalsForTest();
  noteStopSignal(SIGTERM, 1000 * kMs);
  noteStopSignal(SIGTERM, 1000 * kMs + kGracePeriodNs - 1);
  EXPECT_FALSE(skipRequested());
  resetStopSignalsForTest();
  noteStopSignal(SIGTERM, 1000 * kMs);
  noteStopSignal(SIGTERM, 1000 * kMs + kGracePeriodNs);  // an impatient second, later
  EXPECT_TRUE(skipRequested());
  resetStopSignalsForTest();
}

// The bit of `signal` in a signal mask line of /proc/PID/status ("SigCgt:"
// caught: the handler is installed; "ShdPnd:" sent but not yet handled).
bool maskHas(pid_t pid, const std::string& field, int signal) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) {
      return (std::stoull(line.substr(field.size()), nullptr, 16) >> (signal - 1)) & 1;
    }
  }
  return false;
}

bool catches(pid_t pid, int signal) {
  return maskHas(pid, "SigCgt:", signal);
}

bool waitUntil(const std::function<bool()>& condition, std::chrono::seconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(StopSignals, AStopDuringStartUpEndsCleanlyAndLeavesTheOldTrace) {
  INCISE_REQUIRE_RECORDING();
  struct sigaction hangup {};
  sigaction(SIGHUP, nullptr, &hangup);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    SCOPED_TRACE(strsignal(signal));
    if (signal == SIGHUP && hangup.sa_handler == SIG_IGN) continue;  // under nohup it stays ignored
    std::string path = tempTracePath("early-" + std::to_string(signal) + ".trace");
    { std::ofstream(path) << "yesterday's trace"; }
    ChildProcess recorder = ChildProcess::start({INCISE_RECORD_BIN, "-a", "-o", path});
    ASSERT_GT(recorder.pid(), 0);
    // As early as a signal can be anything but fatal: once the handler is in.
    ASSERT_TRUE(
        waitUntil([&] { return catches(recorder.pid(), signal); }, std::chrono::seconds(30)));
    recorder.signal(signal);
    std::optional<int> status = recorder.waitFor(std::chrono::seconds(120));
    ASSERT_TRUE(status.has_value()) << "hung";
    std::string errors = recorder.errors();
    if (errors.find("before recording started") != std::string::npos) {
      EXPECT_EQ(*status, 128 + signal);
      EXPECT_EQ(slurp(path), "yesterday's trace");
    } else {
      // It had just started recording: then the file is a finished trace.
      EXPECT_EQ(*status, 0) << errors;
      TraceCheck check = checkTrace(path);
      EXPECT_TRUE(check.problem.empty()) << check.problem;
      EXPECT_TRUE(check.used_footer) << errors;
    }
    EXPECT_EQ(errors.find("Killed"), std::string::npos);
  }
}

// Stops at random moments from start to well into recording: every run ends
// by its own exit with a finished trace or the old file, never a damaged one.
TEST(StopSignals, AStopAtAnyMomentEndsInAFinishedFile) {
  INCISE_REQUIRE_RECORDING();
  std::mt19937 rng(6);
  std::uniform_int_distribution<int> delay_ms(0, 3000);
  int finished = 0, before = 0;
  for (int i = 0; i < 8; ++i) {
    std::string path = tempTracePath("any-" + std::to_string(i) + ".trace");
    ChildProcess recorder = ChildProcess::start({INCISE_RECORD_BIN, "-a", "-F", "99", "-o", path});
    ASSERT_TRUE(
        waitUntil([&] { return catches(recorder.pid(), SIGTERM); }, std::chrono::seconds(30)));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    recorder.signal(SIGTERM);
    std::optional<int> status = recorder.waitFor(std::chrono::seconds(120));
    ASSERT_TRUE(status.has_value()) << "hung";
    if (*status == 128 + SIGTERM) {
      EXPECT_NE(recorder.errors().find("before recording started"), std::string::npos)
          << recorder.errors();
      EXPECT_FALSE(fs::exists(path));
      ++before;
      continue;
    }
    ASSERT_EQ(*status, 0) << recorder.errors();
    TraceCheck check = checkTrace(path);
    ASSERT_TRUE(check.problem.empty()) << check.problem;
    EXPECT_TRUE(check.used_footer);
    ++finished;
  }
  std::printf("stops: %d finished traces, %d before recording started\n", finished, before);
}

class SecondSignals : public ::testing::Test {
 protected:
  // Records the machine until the trace is in place and holds data, then
  // sends `signals` SIGINTs back to back; returns the trace's notes.
  void stopWith(int signals) {
    path_ = tempTracePath("signals-" + std::to_string(signals) + ".trace");
    ChildProcess recorder = ChildProcess::start({INCISE_RECORD_BIN, "-a", "-F", "99", "-o", path_});
    ASSERT_TRUE(waitUntil(
        [&] {
          std::error_code ec;
          return fs::file_size(path_, ec) > 16 * 1024 && !ec;
        },
        std::chrono::seconds(120)))
        << recorder.errors();
    // One at a time, each once the last was handled: signals of one kind
    // sent together merge into one.
    for (int i = 0; i < signals; ++i) {
      recorder.signal(SIGINT);
      waitUntil([&] { return !maskHas(recorder.pid(), "ShdPnd:", SIGINT); },
                std::chrono::seconds(10));
    }
    std::optional<int> status = recorder.waitFor(std::chrono::seconds(120));
    ASSERT_EQ(status, 0) << recorder.errors();
    errors_ = recorder.errors();
    TraceView trace(path_);
    ASSERT_TRUE(trace.ok()) << trace.error();
    const format::Metadata& m = trace.reader().metadata();
    kernel_symbols_ = m.kernel_symbols.size();
    for (const auto& object : m.objects) symbols_ += object.symbols.size();
    for (const auto& note : m.notes) notes_ += note + "\n";
  }
  std::string path_, errors_, notes_;
  size_t kernel_symbols_ = 0, symbols_ = 0;
};

TEST_F(SecondSignals, TwoAtOnceAsTimeoutSendsThemLoseNothing) {
  INCISE_REQUIRE_RECORDING();
  stopWith(2);
  EXPECT_NE(errors_.find("already stopping and finishing the file"), std::string::npos) << errors_;
  EXPECT_GT(kernel_symbols_, 0u) << errors_;
  EXPECT_GT(symbols_, 0u);
  EXPECT_EQ(notes_.find("skipped"), std::string::npos) << notes_;
  EXPECT_EQ(errors_.find("skipped"), std::string::npos) << errors_;
}

// A third signal may come after the symbol tables were read (the finish was
// quick): then nothing is skipped; what is skipped is always said, in the
// output and in the trace, and the trace is finished either way.
TEST_F(SecondSignals, AThirdSkipsTheSymbolTablesAndSaysSo) {
  INCISE_REQUIRE_RECORDING();
  stopWith(3);
  bool skipped = notes_.find("skipped reading symbol tables") != std::string::npos;
  EXPECT_EQ(skipped, errors_.find("skipped reading symbol tables") != std::string::npos) << errors_;
  if (skipped) {
    EXPECT_EQ(kernel_symbols_, 0u);
  }
  std::printf("third stop signal: symbol tables %s\n", skipped ? "skipped" : "already read");
  TraceCheck check = checkTrace(path_);
  EXPECT_TRUE(check.problem.empty()) << check.problem;
  EXPECT_TRUE(check.used_footer);
}

}  // namespace
}  // namespace incise::testing
