// cpu_work.h: clocks and the unit of CPU work shared by the bundled workloads.
//
// Every workload burns CPU with mix_step(), one xorshift round: a serial
// dependency chain the compiler can neither fold nor vectorize, so the cost of
// N steps is N times the cost of one and work ratios become time ratios.
// mix_step is always inlined so that samples land in the named function that
// runs the loop, never in a helper.
//
// GCC 12 sets up no frame pointer in leaf functions even with
// -fno-omit-frame-pointer, so a frame-pointer walk from a sample in a leaf
// loses the leaf's caller. Named hot functions therefore end with a call to
// keep_value(), which makes them non-leaf (and keeps the result alive).
//
// Example:
//   INCISE_WORKLOAD_FUNCTION std::uint64_t hot_a(std::uint64_t steps, std::uint64_t seed) {
//     for (std::uint64_t i = 0; i < steps; ++i) seed = mix_step(seed);
//     keep_value(seed);
//     return seed;
//   }
#pragma once

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

// Marks a function whose name must show up in samples and probes: C linkage
// (the symbol is the plain name), never inlined, and never cloned (GCC's IPA
// would otherwise emit e.g. "critical_work.constprop.0").
#if defined(__clang__)
#define INCISE_WORKLOAD_FUNCTION extern "C" __attribute__((noinline))
#else
#define INCISE_WORKLOAD_FUNCTION extern "C" __attribute__((noinline, noipa))
#endif

namespace incise::workloads {

inline std::uint64_t clock_ns(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(now.tv_nsec);
}
inline std::uint64_t monotonic_ns() {
  return clock_ns(CLOCK_MONOTONIC);
}
inline std::uint64_t thread_cpu_ns() {
  return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}
inline std::uint64_t process_cpu_ns() {
  return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

inline std::uint64_t current_tid() {
  return static_cast<std::uint64_t>(syscall(SYS_gettid));
}

[[gnu::always_inline]] inline std::uint64_t mix_step(std::uint64_t x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

[[gnu::noinline]] inline void keep_value(std::uint64_t value) {
  asm volatile("" : : "r"(value));
}

// Burns at least `cpu_ns` of the calling thread's CPU time. Always inlined, so
// samples land in the named caller; the clock is read every 65536 steps
// (a few hundred microseconds), which keeps the clock's share of samples small.
[[gnu::always_inline]] inline std::uint64_t burn_thread_cpu(std::uint64_t cpu_ns,
                                                            std::uint64_t seed) {
  const std::uint64_t end = thread_cpu_ns() + cpu_ns;
  do {
    for (int i = 0; i < 65536; ++i) seed = mix_step(seed);
  } while (thread_cpu_ns() < end);
  return seed;
}

// Sleeps for a relative duration, resuming after signals, so the time slept is
// what was asked for.
inline void sleep_ns(std::uint64_t duration_ns) {
  timespec remaining{static_cast<time_t>(duration_ns / 1'000'000'000u),
                     static_cast<long>(duration_ns % 1'000'000'000u)};
  while (nanosleep(&remaining, &remaining) != 0 && errno == EINTR) {
  }
}

}  // namespace incise::workloads
