// latency_story: calls, syscalls and block I/O with known latencies, each
// measured by the program itself, for checking latency recording.
//
// - `timed_call` is called --calls times; every --slow-every-th call sleeps
//   --slow-us inside it (a raw nanosleep syscall), the others return at once.
//   With --slow-spin-us, a slow call first runs that long on the CPU (its
//   thread's CPU clock), so its time splits into on-CPU and blocked.
// - the nanosleep syscall (SYS_nanosleep itself: glibc's nanosleep() uses
//   clock_nanosleep) is called --sleeps-1ms times for 1 ms, then
//   --sleeps-10ms times for 10 ms, with the timer slack at 1 ns.
// - with --block-device DEV, --block-ios O_DIRECT reads of --block-bytes at
//   distinct aligned offsets, each timed.
// - --getppid-calls getppid syscalls in a loop, timed as a whole (a cheap
//   syscall: the cost a syscall tracer adds to each one).
//
// Every duration is CLOCK_MONOTONIC around the call, so a recorder's interval
// (inside the call) is at most the printed one. Durations are printed per
// log2 bucket: bucket b holds [2^b, 2^(b+1)) ns.
//
// Output (stdout, key=value): pid, tid, calls, slow_calls, fast_calls,
// call_ns.max_fast, call_ns.min_slow, call.bucket.B (calls measured in bucket B),
// call_ns.total_fast (all fast calls, for overhead per call), slow_cpu_ns.min and
// slow_cpu_ns.max (the thread's CPU time inside a slow call), calls_cpu_ns
// (the thread's CPU time over the call loop: what probes cost it, whatever the load),
// sleep_1ms.calls, sleep_1ms.min_ns, sleep_1ms.max_ns, sleep_1ms.bucket.B,
// the same for sleep_10ms, getppid_calls, getppid_ns, block.ios, block.bytes, block.min_ns,
// block.max_ns, elapsed_ns.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "tools/workloads/cpu_work.h"
#include "tools/workloads/options.h"
#include "tools/workloads/report.h"

namespace incise::workloads {

namespace {

void raw_nanosleep(std::uint64_t ns) {
  timespec request{static_cast<time_t>(ns / 1'000'000'000u),
                   static_cast<long>(ns % 1'000'000'000u)};
  while (syscall(SYS_nanosleep, &request, &request) != 0 && errno == EINTR) {
  }
}

unsigned bucket_of(std::uint64_t ns) {
  return ns == 0 ? 0 : static_cast<unsigned>(std::bit_width(ns) - 1);
}

struct Durations {
  std::uint64_t calls = 0;
  std::uint64_t min_ns = UINT64_MAX;
  std::uint64_t max_ns = 0;
  std::uint64_t total_ns = 0;
  std::map<unsigned, std::uint64_t> buckets;
  void add(std::uint64_t ns) {
    ++calls;
    min_ns = std::min(min_ns, ns);
    max_ns = std::max(max_ns, ns);
    total_ns += ns;
    ++buckets[bucket_of(ns)];
  }
  void print(const std::string& prefix) const {
    report(prefix + ".calls", calls);
    report(prefix + ".min_ns", calls ? min_ns : 0);
    report(prefix + ".max_ns", max_ns);
    for (const auto& [bucket, count] : buckets)
      report(prefix + ".bucket." + std::to_string(bucket), count);
  }
};

}  // namespace

// Returns its argument so the call cannot be dropped.
INCISE_WORKLOAD_FUNCTION std::uint64_t timed_call(std::uint64_t sleep_ns, std::uint64_t spin_ns) {
  std::uint64_t seed = sleep_ns;
  if (spin_ns != 0) {
    const std::uint64_t until = thread_cpu_ns() + spin_ns;
    while (thread_cpu_ns() < until) {
      for (int i = 0; i < 1000; ++i) seed = mix_step(seed);
    }
  }
  if (sleep_ns != 0) raw_nanosleep(sleep_ns);
  keep_value(seed);
  return sleep_ns;
}

namespace {

int run(int argc, char** argv) {
  std::uint64_t calls = 2000, slow_every = 20, slow_us = 2000, slow_spin_us = 0;
  std::uint64_t sleeps_1ms = 20, sleeps_10ms = 10;
  std::uint64_t getppid_calls = 0;
  std::string block_device;
  std::uint64_t block_ios = 200, block_bytes = 4096;
  Options options("latency_story",
                  "Calls, syscalls and block I/O with known latencies, each timed by the\n"
                  "program. Prints counts and log2-bucket histograms as key=value.",
                  "latency_story --calls 2000 --slow-every 20 --slow-us 2000");
  options.add("calls", "timed_call calls", calls);
  options.add("slow-every", "every N-th call sleeps --slow-us (0: none)", slow_every);
  options.add("slow-us", "microseconds a slow call sleeps", slow_us);
  options.add("slow-spin-us", "microseconds of CPU a slow call runs before it sleeps",
              slow_spin_us);
  options.add("sleeps-1ms", "nanosleep syscalls of 1 ms", sleeps_1ms);
  options.add("sleeps-10ms", "nanosleep syscalls of 10 ms", sleeps_10ms);
  options.add("getppid-calls", "getppid syscalls in a loop, timed as a whole (0: none)",
              getppid_calls);
  options.add("block-device", "block device for O_DIRECT reads (empty: none)", block_device);
  options.add("block-ios", "O_DIRECT reads", block_ios);
  options.add("block-bytes", "bytes per read (a multiple of 4096)", block_bytes);
  options.parse_or_exit(argc, argv);
  if (block_bytes == 0 || block_bytes % 4096 != 0) {
    std::fprintf(stderr, "latency_story: --block-bytes must be a multiple of 4096\n");
    return 2;
  }
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // sleeps end when asked, not up to 50 us later

  const std::uint64_t start_ns = monotonic_ns();
  Durations fast, slow, slow_cpu;
  const std::uint64_t calls_cpu_start = thread_cpu_ns();
  for (std::uint64_t i = 1; i <= calls; ++i) {
    bool is_slow = slow_every != 0 && i % slow_every == 0;
    std::uint64_t before = monotonic_ns(), cpu_before = thread_cpu_ns();
    timed_call(is_slow ? slow_us * 1000 : 0, is_slow ? slow_spin_us * 1000 : 0);
    std::uint64_t cpu_ns = thread_cpu_ns() - cpu_before;
    (is_slow ? slow : fast).add(monotonic_ns() - before);
    if (is_slow) slow_cpu.add(cpu_ns);
  }
  const std::uint64_t calls_cpu_ns = thread_cpu_ns() - calls_cpu_start;
  Durations all_calls = fast;
  for (const auto& [b, n] : slow.buckets) all_calls.buckets[b] += n;

  Durations sleep_1ms, sleep_10ms;
  for (std::uint64_t i = 0; i < sleeps_1ms + sleeps_10ms; ++i) {
    bool short_one = i < sleeps_1ms;
    std::uint64_t before = monotonic_ns();
    raw_nanosleep(short_one ? 1'000'000 : 10'000'000);
    (short_one ? sleep_1ms : sleep_10ms).add(monotonic_ns() - before);
  }

  std::uint64_t getppid_start = monotonic_ns(), getppid_cpu_start = thread_cpu_ns();
  for (std::uint64_t i = 0; i < getppid_calls; ++i) syscall(SYS_getppid);
  std::uint64_t getppid_ns = monotonic_ns() - getppid_start;
  std::uint64_t getppid_cpu_ns = thread_cpu_ns() - getppid_cpu_start;

  Durations block;
  if (!block_device.empty()) {
    int fd = open(block_device.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0) {
      std::fprintf(stderr, "latency_story: %s: %s\n", block_device.c_str(), std::strerror(errno));
      return 1;
    }
    void* buffer = std::aligned_alloc(4096, block_bytes);
    for (std::uint64_t i = 0; i < block_ios; ++i) {
      std::uint64_t before = monotonic_ns();
      ssize_t got = pread(fd, buffer, block_bytes, static_cast<off_t>(i * block_bytes));
      if (got != static_cast<ssize_t>(block_bytes)) {
        std::fprintf(stderr, "latency_story: read %llu of %s: %s\n",
                     static_cast<unsigned long long>(i), block_device.c_str(),
                     got < 0 ? std::strerror(errno) : "short read");
        return 1;
      }
      block.add(monotonic_ns() - before);
    }
    std::free(buffer);
    close(fd);
  }

  report("pid", static_cast<std::uint64_t>(getpid()));
  report("tid", current_tid());
  report("calls", calls);
  report("slow_calls", slow.calls);
  report("fast_calls", fast.calls);
  report("call_ns.max_fast", fast.max_ns);
  report("call_ns.total_fast", fast.total_ns);
  report("calls_cpu_ns", calls_cpu_ns);
  report("call_ns.min_slow", slow.calls ? slow.min_ns : 0);
  report("slow_cpu_ns.min", slow_cpu.calls ? slow_cpu.min_ns : 0);
  report("slow_cpu_ns.max", slow_cpu.max_ns);
  for (const auto& [bucket, count] : all_calls.buckets)
    report("call.bucket." + std::to_string(bucket), count);
  sleep_1ms.print("sleep_1ms");
  sleep_10ms.print("sleep_10ms");
  report("getppid_calls", getppid_calls);
  report("getppid_ns", getppid_ns);
  report("getppid_cpu_ns", getppid_cpu_ns);
  report("block.ios", block.calls);
  report("block.bytes", block.calls * block_bytes);
  report("block.min_ns", block.calls ? block.min_ns : 0);
  report("block.max_ns", block.max_ns);
  report("elapsed_ns", monotonic_ns() - start_ns);
  return 0;
}

}  // namespace
}  // namespace incise::workloads

int main(int argc, char** argv) {
  return incise::workloads::run(argc, argv);
}
