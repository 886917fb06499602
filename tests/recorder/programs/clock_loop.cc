// clock_loop MS: calls clock_gettime(CLOCK_MONOTONIC) in a loop for MS of
// wall time; the vDSO answers without entering the kernel, so the CPU
// samples land in the [vdso] mapping.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

int main(int argc, char** argv) {
  const uint64_t ms = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 300;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const uint64_t start = static_cast<uint64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
  uint64_t calls = 0;
  for (uint64_t now = start; now - start < ms; ++calls) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = static_cast<uint64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
  }
  std::printf("calls=%llu\n", static_cast<unsigned long long>(calls));
  return 0;
}
