// sleeper: a thread that spends a known time off-CPU, for checking off-CPU
// accounting. The main thread sleeps --count times --interval-ms in
// nanosleep (function sleep_in_nanosleep), then blocks in read() on a pipe
// (function block_on_pipe) that a helper thread writes to after --pipe-ms.
// Both kinds of wait are "blocked" (not preempted) in the scheduler's terms.
// With --vforks N it first vforks N children that exit at once (function
// block_in_vfork): the parent waits for each killably, an uninterruptible
// block at one kernel place. With --fdatasyncs N it then writes a page of
// an unlinked file in /var/tmp and fdatasyncs it N times (function
// block_in_fdatasync): uninterruptible blocks at one user place on a few
// kernel paths in turn (the page's writeback, the journal, the disk's flush).
// With --threads N it finally runs N short-lived threads, a few at a time,
// each sleeping --thread-sleeps times 100 us in nanosleep (function
// sleep_in_thread): many threads blocking at their own place, one after
// another, as a server's thread churn does.
// Every wait is timed with CLOCK_MONOTONIC, so slept_ns is measured, not
// nominal. The waiting thread is the main thread: tid equals pid.
//
// Output (stdout, key=value): pid, tid, nanosleep_calls, nanosleep_ns,
// pipe_wait_ns, slept_ns (= nanosleep_ns + pipe_wait_ns), writer_tid,
// vfork_calls, fdatasync_calls, threads_run, thread_sleeps, elapsed_ns.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "tools/workloads/cpu_work.h"
#include "tools/workloads/options.h"
#include "tools/workloads/pipe_io.h"
#include "tools/workloads/report.h"

namespace incise::workloads {

INCISE_WORKLOAD_FUNCTION std::uint64_t sleep_in_nanosleep(std::uint64_t duration_ns) {
  const std::uint64_t start = monotonic_ns();
  sleep_ns(duration_ns);
  return monotonic_ns() - start;
}

INCISE_WORKLOAD_FUNCTION void sleep_in_thread(std::uint64_t sleeps) {
  for (std::uint64_t i = 0; i < sleeps; ++i) sleep_ns(100'000);
}

// Returns the nanoseconds spent blocked in read(), or 0 when the read failed.
INCISE_WORKLOAD_FUNCTION std::uint64_t block_on_pipe(int read_fd) {
  const std::uint64_t start = monotonic_ns();
  const bool got = read_byte(read_fd);
  const std::uint64_t waited = monotonic_ns() - start;
  return got ? waited : 0;
}

// Returns whether the child was made and reaped.
INCISE_WORKLOAD_FUNCTION bool block_in_vfork() {
  const pid_t child = vfork();
  if (child == 0) _exit(0);
  if (child < 0) return false;
  int status = 0;
  return waitpid(child, &status, 0) == child;
}

// Returns whether the page was written and synced.
INCISE_WORKLOAD_FUNCTION bool block_in_fdatasync(int fd, std::uint64_t page) {
  char bytes[4096];
  std::memset(bytes, static_cast<int>('a' + page % 26), sizeof bytes);
  const off_t offset = static_cast<off_t>((page % 64) * sizeof bytes);
  return pwrite(fd, bytes, sizeof bytes, offset) == static_cast<ssize_t>(sizeof bytes) &&
         fdatasync(fd) == 0;
}

namespace {

int run(int argc, char** argv) {
  std::uint64_t count = 20;
  std::uint64_t interval_ms = 50;
  std::uint64_t pipe_ms = 200;
  std::uint64_t vforks = 0;
  std::uint64_t fdatasyncs = 0;
  std::uint64_t threads = 0;
  std::uint64_t thread_sleeps = 3;
  Options options("sleeper",
                  "Sleeps a known time off-CPU: --count x --interval-ms in nanosleep, then a\n"
                  "read() on a pipe written --pipe-ms later. Prints measured times as key=value.",
                  "sleeper --count 20 --interval-ms 50 --pipe-ms 200");
  options.add("count", "nanosleep calls", count);
  options.add("interval-ms", "milliseconds per nanosleep call", interval_ms);
  options.add("pipe-ms", "milliseconds blocked reading the pipe; 0 = skip the pipe", pipe_ms);
  options.add("vforks", "vforks of a child that exits at once, before the sleeps", vforks);
  options.add("fdatasyncs", "page writes and fdatasyncs of a file in /var/tmp, after the vforks",
              fdatasyncs);
  options.add("threads", "short-lived threads run after the other waits, a few at a time", threads);
  options.add("thread-sleeps", "100-us nanosleeps of each of those threads", thread_sleeps);
  options.parse_or_exit(argc, argv);

  const std::uint64_t start_ns = monotonic_ns();
  for (std::uint64_t i = 0; i < vforks; ++i) {
    if (!block_in_vfork()) {
      std::fprintf(stderr, "sleeper: vfork failed: %s\n", std::strerror(errno));
      return 1;
    }
  }
  if (fdatasyncs != 0) {
    char path[] = "/var/tmp/sleeper-XXXXXX";  // on disk: a tmpfs fdatasync does not block
    const int fd = mkstemp(path);
    if (fd < 0) {
      std::fprintf(stderr, "sleeper: mkstemp %s failed: %s\n", path, std::strerror(errno));
      return 1;
    }
    unlink(path);
    for (std::uint64_t i = 0; i < fdatasyncs; ++i) {
      if (!block_in_fdatasync(fd, i)) {
        std::fprintf(stderr, "sleeper: write or fdatasync failed: %s\n", std::strerror(errno));
        close(fd);
        return 1;
      }
    }
    close(fd);
  }
  std::uint64_t nanosleep_ns = 0;
  for (std::uint64_t i = 0; i < count; ++i)
    nanosleep_ns += sleep_in_nanosleep(interval_ms * 1'000'000);

  std::uint64_t pipe_wait_ns = 0;
  std::uint64_t writer_tid = 0;
  if (pipe_ms != 0) {
    int fds[2];
    if (pipe(fds) != 0) {
      std::fprintf(stderr, "sleeper: pipe failed: %s\n", std::strerror(errno));
      return 1;
    }
    std::thread writer([&] {
      writer_tid = current_tid();
      sleep_ns(pipe_ms * 1'000'000);
      const char byte = 'x';
      if (write(fds[1], &byte, 1) != 1) std::fprintf(stderr, "sleeper: pipe write failed\n");
    });
    pipe_wait_ns = block_on_pipe(fds[0]);
    writer.join();
    close(fds[0]);
    close(fds[1]);
    if (pipe_wait_ns == 0) {
      std::fprintf(stderr, "sleeper: read from the pipe failed\n");
      return 1;
    }
  }

  constexpr std::uint64_t kThreadsAtATime = 8;
  for (std::uint64_t first = 0; first < threads; first += kThreadsAtATime) {
    std::vector<std::thread> batch;
    for (std::uint64_t i = first; i < threads && i < first + kThreadsAtATime; ++i)
      batch.emplace_back(sleep_in_thread, thread_sleeps);
    for (std::thread& thread : batch) thread.join();
  }

  report("pid", static_cast<std::uint64_t>(getpid()));
  report("tid", current_tid());
  report("nanosleep_calls", count);
  report("nanosleep_ns", nanosleep_ns);
  report("pipe_wait_ns", pipe_wait_ns);
  report("slept_ns", nanosleep_ns + pipe_wait_ns);
  report("writer_tid", writer_tid);
  report("vfork_calls", vforks);
  report("fdatasync_calls", fdatasyncs);
  report("threads_run", threads);
  report("thread_sleeps", threads * thread_sleeps);
  report("elapsed_ns", monotonic_ns() - start_ns);
  return 0;
}

}  // namespace
}  // namespace incise::workloads

int main(int argc, char** argv) {
  return incise::workloads::run(argc, argv);
}
