// An event storm into a one-page ring buffer: the kernel drops events, the
// recorder counts them as Lost rows, and the recording ends on time.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "recorder/record_session.h"
#include "tests/hardening/child_process.h"
#include "tests/hardening/trace_check.h"
#include "tests/recorder/recorder_test_support.h"

namespace incise::testing {
namespace {

// 64 threads that sleep 20 us at a time: hundreds of thousands of switches
// and wake-ups a second across both CPUs.
pid_t startThreadStorm(std::chrono::seconds length) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  std::vector<std::thread> threads;
  auto end = std::chrono::steady_clock::now() + length;
  for (int i = 0; i < 64; ++i) {
    threads.emplace_back([end] {
      while (std::chrono::steady_clock::now() < end) usleep(20);
    });
  }
  for (auto& t : threads) t.join();
  _exit(0);
}

TEST(RingOverflow, StormIntoATinyRingIsCountedAndEndsOnTime) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("overflow.trace");
  pid_t storm = startThreadStorm(std::chrono::seconds(8));
  ASSERT_GT(storm, 0);

  // The ring size is not a command-line option: record in a child process
  // (the recorder drops capabilities and installs signal handlers).
  pid_t recorder = fork();
  if (recorder == 0) {
    recorder::RecordConfig config;
    config.output = path;
    config.target_kind = recorder::TargetKind::kAll;
    config.frequency_hz = 999;
    config.duration_seconds = 3;
    config.ring_buffer_bytes = 4096;  // one page: the smallest ring the kernel accepts
    // Every switch and wake-up through the ring: by default the kernel keeps
    // the short blocks of a storm of short sleeps out of it.
    config.sched_min_block_ns = 0;
    config.argv = {"incise-record", "(ring overflow test)"};
    _exit(recorder::runRecording(config));
  }
  ASSERT_GT(recorder, 0);
  uint64_t started = monotonicNowNs();
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(recorder, &status, WNOHANG)) == 0 &&
         monotonicNowNs() - started < 30'000'000'000ull) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (done == 0) kill(recorder, SIGKILL);
  kill(storm, SIGKILL);
  waitpid(storm, nullptr, 0);
  ASSERT_EQ(done, recorder) << "the recorder hung under the storm";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  double seconds = static_cast<double>(monotonicNowNs() - started) / 1e9;
  EXPECT_LT(seconds, 15.0) << "a 3 s recording took " << seconds << " s";

  TraceCheck check = checkTrace(path);
  ASSERT_TRUE(check.problem.empty()) << check.problem;
  EXPECT_GT(check.rows[format::EventKind::kLost], 0u);
  EXPECT_GT(check.lost_events, 0u) << "a one-page ring under a storm must drop events";
  EXPECT_GT(check.rows[format::EventKind::kSchedSwitch], 0u);
  std::printf("ring overflow: %llu events lost, %llu switches and %llu samples kept, %.1f s\n",
              static_cast<unsigned long long>(check.lost_events),
              static_cast<unsigned long long>(check.rows[format::EventKind::kSchedSwitch]),
              static_cast<unsigned long long>(check.rows[format::EventKind::kCpuSample]), seconds);
}

}  // namespace
}  // namespace incise::testing
