// qsort_memcpy: a program whose time goes into libc's internal functions,
// for checking that they are named as perf names them from libc's debug
// file: glibc's qsort sorts with msort_with_tmp (a static function), and
// memcpy of large blocks runs an ifunc variant (__memmove_avx512_unaligned_erms,
// __memmove_avx_unaligned_erms, ... by CPU), neither in libc's .dynsym.
//
// Each round sorts a shuffled array of 64 Ki ints and copies a 4 MiB buffer
// back and forth 8 times (on this 2-CPU VM about 40% and 55% of the time),
// for about SECONDS seconds (default 5).
//
// Output (stdout, key=value): pid, rounds, elapsed_ns.
//
//   qsort_memcpy 3
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tools/workloads/report.h"

namespace {

int compareInts(const void* a, const void* b) {
  const int x = *static_cast<const int*>(a);
  const int y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

std::uint64_t nowNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(now.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::fprintf(stderr,
                 "usage: qsort_memcpy [SECONDS]\n"
                 "  sorts with libc's qsort and copies with memcpy for SECONDS (default 5)\n"
                 "example: qsort_memcpy 3\n");
    return 0;
  }
  const double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
  if (!(seconds > 0 && seconds < 3600)) {
    std::fprintf(stderr, "qsort_memcpy: SECONDS must be in (0, 3600), got '%s'\n", argv[1]);
    return 2;
  }
  incise::workloads::report("pid", static_cast<std::uint64_t>(getpid()));
  std::vector<int> values(64 * 1024);
  std::vector<char> from(4 << 20, 'x'), to(4 << 20);
  std::uint64_t seed = 12345;
  const std::uint64_t start = nowNs();
  const auto end = start + static_cast<std::uint64_t>(seconds * 1e9);
  std::uint64_t rounds = 0;
  volatile char sink = 0;
  while (nowNs() < end) {
    for (int& v : values) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      v = static_cast<int>(seed >> 33);
    }
    std::qsort(values.data(), values.size(), sizeof(int), compareInts);
    for (int i = 0; i < 8; ++i) {
      std::memcpy(to.data(), from.data(), from.size());
      std::memcpy(from.data(), to.data(), to.size());
    }
    sink = sink + to[static_cast<size_t>(rounds) % to.size()];
    ++rounds;
  }
  incise::workloads::report("rounds", rounds);
  incise::workloads::report("elapsed_ns", nowNs() - start);
  return 0;
}
