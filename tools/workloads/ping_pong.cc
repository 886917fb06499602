// ping_pong: two threads hand the CPU to each other over a pair of pipes, so
// nearly every block is a short sleep that ends when the other thread writes,
// on whichever CPU the scheduler picks. The ping thread writes a byte and
// reads the answer; the pong thread reads it and answers, --rounds times.
// Both run SCHED_BATCH, under which a woken thread does not preempt the one
// that woke it: the writer goes on to its read and sleeps, handing its CPU
// over, instead of being preempted by the reader it woke.
//
// Each thread times its reads with CLOCK_MONOTONIC (read_wait_ns: an upper
// bound on its blocked time) and reads its own voluntary and involuntary
// context switches from getrusage(RUSAGE_THREAD) when its last round is done:
// the kernel's count of the switches a recording should show.
//
// Output (stdout, key=value): pid, ping_tid, pong_tid, round_trips,
// ping_read_wait_ns, pong_read_wait_ns, ping_voluntary_switches,
// pong_voluntary_switches, ping_involuntary_switches,
// pong_involuntary_switches, ping_elapsed_ns, pong_elapsed_ns, elapsed_ns.
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

#include "tools/workloads/cpu_work.h"
#include "tools/workloads/options.h"
#include "tools/workloads/pipe_io.h"
#include "tools/workloads/report.h"

namespace incise::workloads {

// Returns the nanoseconds spent in read(), or -1 when it failed.
INCISE_WORKLOAD_FUNCTION std::int64_t wait_for_the_ball(int read_fd) {
  const std::uint64_t start = monotonic_ns();
  const bool got = read_byte(read_fd);
  const std::uint64_t waited = monotonic_ns() - start;
  return got ? static_cast<std::int64_t>(waited) : -1;
}

INCISE_WORKLOAD_FUNCTION bool hit_the_ball(int write_fd) {
  return write_byte(write_fd);
}

namespace {

struct Player {
  std::uint64_t tid = 0;
  std::uint64_t read_wait_ns = 0;
  std::uint64_t voluntary = 0;
  std::uint64_t involuntary = 0;
  std::uint64_t elapsed_ns = 0;
  bool failed = false;
};

// Serves first when `serves`: write, then wait; otherwise wait, then answer.
void play(Player& me, int read_fd, int write_fd, std::uint64_t rounds, bool serves) {
  const std::uint64_t start = monotonic_ns();
  me.tid = current_tid();
  sched_param batch{};
  if (pthread_setschedparam(pthread_self(), SCHED_BATCH, &batch) != 0) me.failed = true;
  for (std::uint64_t i = 0; i < rounds && !me.failed; ++i) {
    if (serves && !hit_the_ball(write_fd)) me.failed = true;
    const std::int64_t waited = wait_for_the_ball(read_fd);
    if (waited < 0) me.failed = true;
    me.read_wait_ns += static_cast<std::uint64_t>(waited < 0 ? 0 : waited);
    if (!serves && !hit_the_ball(write_fd)) me.failed = true;
  }
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) != 0) me.failed = true;
  me.voluntary = static_cast<std::uint64_t>(usage.ru_nvcsw);
  me.involuntary = static_cast<std::uint64_t>(usage.ru_nivcsw);
  me.elapsed_ns = monotonic_ns() - start;
}

int run(int argc, char** argv) {
  std::uint64_t rounds = 20000;
  Options options("ping_pong",
                  "Two threads hand a byte back and forth over two pipes, --rounds times.\n"
                  "Prints each thread's read waits and context switches as key=value.",
                  "ping_pong --rounds 20000");
  options.add("rounds", "round trips", rounds);
  options.parse_or_exit(argc, argv);

  int to_pong[2];
  int to_ping[2];
  if (pipe(to_pong) != 0 || pipe(to_ping) != 0) {
    std::fprintf(stderr, "ping_pong: pipe failed: %s\n", std::strerror(errno));
    return 1;
  }
  const std::uint64_t start_ns = monotonic_ns();
  Player ping;
  Player pong;
  std::thread pong_thread([&] { play(pong, to_pong[0], to_ping[1], rounds, false); });
  std::thread ping_thread([&] { play(ping, to_ping[0], to_pong[1], rounds, true); });
  ping_thread.join();
  pong_thread.join();
  const std::uint64_t elapsed_ns = monotonic_ns() - start_ns;
  for (int fd : {to_pong[0], to_pong[1], to_ping[0], to_ping[1]}) close(fd);
  if (ping.failed || pong.failed) {
    std::fprintf(stderr, "ping_pong: a read, write, getrusage or SCHED_BATCH failed\n");
    return 1;
  }

  report("pid", static_cast<std::uint64_t>(getpid()));
  report("ping_tid", ping.tid);
  report("pong_tid", pong.tid);
  report("round_trips", rounds);
  report("ping_read_wait_ns", ping.read_wait_ns);
  report("pong_read_wait_ns", pong.read_wait_ns);
  report("ping_voluntary_switches", ping.voluntary);
  report("pong_voluntary_switches", pong.voluntary);
  report("ping_involuntary_switches", ping.involuntary);
  report("pong_involuntary_switches", pong.involuntary);
  report("ping_elapsed_ns", ping.elapsed_ns);
  report("pong_elapsed_ns", pong.elapsed_ns);
  report("elapsed_ns", elapsed_ns);
  return 0;
}

}  // namespace
}  // namespace incise::workloads

int main(int argc, char** argv) {
  return incise::workloads::run(argc, argv);
}
