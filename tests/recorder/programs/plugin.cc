// The library that dlopen_burn loads: one function that burns CPU, so
// samples land in this object and nowhere else.
#include <cstdint>
#include <ctime>

namespace {
uint64_t threadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}
}  // namespace

extern "C" __attribute__((noinline)) uint64_t burn_in_plugin(uint64_t cpu_ms) {
  const uint64_t until = threadCpuNs() + cpu_ms * 1'000'000ull;
  uint64_t x = 1;
  do {
    for (int i = 0; i < 200000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  } while (threadCpuNs() < until);
  return x;
}
