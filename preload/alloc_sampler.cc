#include "preload/alloc_sampler.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>

namespace incise::preload {
namespace {

std::atomic<uint64_t> g_mean_bytes{0};  // 0: sampling off

struct ThreadCountdown {
  uint64_t bytes_left = 0;  // 0 before the thread's first draw
  uint64_t random_state = 0;
};
thread_local ThreadCountdown t_countdown;

// splitmix64: the seed of each thread's generator.
uint64_t mixed(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// xorshift64*: uniform in (0, 1].
double nextUniform(uint64_t& state) {
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  const uint64_t bits = (state * 0x2545f4914f6cdd1dull) >> 11;  // 53 bits
  return (static_cast<double>(bits) + 1.0) / 9007199254740992.0;
}

uint64_t drawCountdown(ThreadCountdown& countdown, uint64_t mean) {
  if (countdown.random_state == 0) {
    static std::atomic<uint64_t> threads{0};
    countdown.random_state =
        mixed(reinterpret_cast<uintptr_t>(&countdown) ^ __builtin_ia32_rdtsc() ^
              (threads.fetch_add(1, std::memory_order_relaxed) << 48)) |
        1;
  }
  const double bytes = -std::log(nextUniform(countdown.random_state)) * static_cast<double>(mean);
  return bytes < 1.0      ? 1
         : bytes > 9.0e18 ? uint64_t{9'000'000'000'000'000'000u}
                          : static_cast<uint64_t>(bytes);
}

void say(const char* text) {
  ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

}  // namespace

void configureSampling(const char* sample_bytes) {
  if (!sample_bytes) return;
  uint64_t value = 0;
  bool valid = *sample_bytes != '\0';
  for (const char* c = sample_bytes; valid && *c; ++c) {
    valid = *c >= '0' && *c <= '9' && value <= kMaxSampleBytes;
    value = value * 10 + static_cast<uint64_t>(*c - '0');
  }
  if (!valid || value < kMinSampleBytes || value > kMaxSampleBytes) {
    say("incise-preload: INCISE_ALLOC_SAMPLE_BYTES is not a number of bytes in [1, 1073741824]: "
        "allocations are not sampled\n");
    g_mean_bytes.store(0, std::memory_order_relaxed);
    return;
  }
  g_mean_bytes.store(value, std::memory_order_relaxed);
}

bool samplingEnabled() {
  return g_mean_bytes.load(std::memory_order_relaxed) != 0;
}

uint64_t sampleWeight(uint64_t size, uint64_t mean_bytes) {
  const double ratio = static_cast<double>(size) / static_cast<double>(mean_bytes);
  const double probability = -std::expm1(-ratio);
  const double weight = static_cast<double>(size) / probability;
  return weight < 1.0 ? 1 : static_cast<uint64_t>(weight + 0.5);
}

uint64_t sampleAllocation(size_t size) {
  const uint64_t mean = g_mean_bytes.load(std::memory_order_relaxed);
  if (mean == 0) return 0;
  ThreadCountdown& countdown = t_countdown;
  if (countdown.bytes_left > size) {
    countdown.bytes_left -= size;
    return 0;
  }
  if (countdown.bytes_left == 0) {  // the thread's first allocation
    countdown.bytes_left = drawCountdown(countdown, mean);
    if (countdown.bytes_left > size) {
      countdown.bytes_left -= size;
      return 0;
    }
  }
  // Crossed: sampled. The bytes past zero are forgotten (the exponential
  // has no memory), and the next countdown starts afresh.
  countdown.bytes_left = drawCountdown(countdown, mean);
  return sampleWeight(size, mean);
}

}  // namespace incise::preload
