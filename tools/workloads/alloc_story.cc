// alloc_story: allocations from known sites at known byte totals, for
// checking sampled allocation profiles (--alloc) against the program's own
// accounting.
//
// Each named function allocates fixed-size blocks and frees them (in
// batches, so many are live at once):
//   make_small_records      --small-count blocks of 64 bytes (malloc)
//   make_buffers            --buffer-count blocks of 16 KiB (malloc, some calloc)
//   make_objects_with_new   --new-count arrays of 256 bytes (operator new[])
//   allocate_in_handler     from a SIGUSR1 handler, 8 blocks of 8 KiB per signal,
//                           --signals signals (raised by the program itself, so the
//                           handler never interrupts the C library's allocator)
//   leak_blocks             --leak-count blocks of 4 KiB, never freed
// --scale multiplies every count (a longer run for benchmarks).
//
// Output (stdout, key=value): pid, bytes.SITE and count.SITE for each site
// above, leaked_bytes, allocations (all of them), elapsed_ns.
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tools/workloads/cpu_work.h"
#include "tools/workloads/options.h"
#include "tools/workloads/report.h"

namespace incise::workloads {

constexpr std::uint64_t kSmallBytes = 64;
constexpr std::uint64_t kBufferBytes = 16 << 10;
constexpr std::uint64_t kNewBytes = 256;
constexpr std::uint64_t kHandlerBytes = 8 << 10;
constexpr std::uint64_t kHandlerBlocksPerSignal = 8;
constexpr std::uint64_t kLeakBytes = 4 << 10;
constexpr std::size_t kBatch = 1024;  // blocks live at once before a site frees them

// Writes the first byte of each block, so the allocator cannot skip it.
void touch(void* block) {
  *static_cast<volatile char*>(block) = 1;
}

INCISE_WORKLOAD_FUNCTION void make_small_records(std::uint64_t count) {
  void* batch[kBatch];
  for (std::uint64_t done = 0; done < count;) {
    std::size_t n = 0;
    for (; n < kBatch && done < count; ++n, ++done) touch(batch[n] = std::malloc(kSmallBytes));
    for (std::size_t i = 0; i < n; ++i) std::free(batch[i]);
  }
}

INCISE_WORKLOAD_FUNCTION void make_buffers(std::uint64_t count) {
  void* batch[kBatch];
  for (std::uint64_t done = 0; done < count;) {
    std::size_t n = 0;
    for (; n < kBatch && done < count; ++n, ++done) {
      batch[n] = done % 4 == 0 ? std::calloc(1, kBufferBytes) : std::malloc(kBufferBytes);
      touch(batch[n]);
    }
    for (std::size_t i = 0; i < n; ++i) std::free(batch[i]);
  }
}

INCISE_WORKLOAD_FUNCTION void make_objects_with_new(std::uint64_t count) {
  char* batch[kBatch];
  for (std::uint64_t done = 0; done < count;) {
    std::size_t n = 0;
    for (; n < kBatch && done < count; ++n, ++done) touch(batch[n] = new char[kNewBytes]);
    for (std::size_t i = 0; i < n; ++i) delete[] batch[i];
  }
}

INCISE_WORKLOAD_FUNCTION void allocate_in_handler() {
  void* blocks[kHandlerBlocksPerSignal];
  for (void*& block : blocks) touch(block = std::malloc(kHandlerBytes));
  for (void* block : blocks) std::free(block);
}

INCISE_WORKLOAD_FUNCTION void raise_signals(std::uint64_t count) {
  for (std::uint64_t i = 0; i < count; ++i) raise(SIGUSR1);
}

INCISE_WORKLOAD_FUNCTION std::uint64_t leak_blocks(std::uint64_t count) {
  std::uint64_t leaked = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    touch(std::malloc(kLeakBytes));  // never freed: the leak
    leaked += kLeakBytes;
  }
  keep_value(leaked);
  return leaked;
}

namespace {

void onSignal(int) {
  allocate_in_handler();
}

void reportSite(const char* site, std::uint64_t count, std::uint64_t block_bytes) {
  report(std::string("bytes.") + site, count * block_bytes);
  report(std::string("count.") + site, count);
}

}  // namespace

}  // namespace incise::workloads

int main(int argc, char** argv) {
  using namespace incise::workloads;
  std::uint64_t small = 1 << 20, buffers = 4096, news = 1 << 18, signals = 1024, leaks = 8192;
  std::uint64_t scale = 1;
  Options options("alloc_story",
                  "Allocations from known sites at known byte totals, frees, a signal handler "
                  "that allocates, and a known leak.",
                  "alloc_story --scale 4");
  options.add("small-count", "64-byte blocks make_small_records allocates and frees", small);
  options.add("buffer-count", "16-KiB blocks make_buffers allocates and frees", buffers);
  options.add("new-count", "256-byte arrays make_objects_with_new allocates and deletes", news);
  options.add("signals", "SIGUSR1s raised; the handler allocates and frees 8 x 8 KiB", signals);
  options.add("leak-count", "4-KiB blocks leak_blocks leaks", leaks);
  options.add("scale", "multiplies every count", scale);
  options.parse_or_exit(argc, argv);
  constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 32;
  for (std::uint64_t* count : {&small, &buffers, &news, &signals, &leaks}) {
    if (scale > 4096 || *count > kMaxCount / (scale ? scale : 1)) {
      std::fprintf(stderr, "alloc_story: a count times --scale is at most 2^32, --scale 4096\n");
      return 2;
    }
    *count *= scale;
  }
  if (leaks * kLeakBytes > (std::uint64_t{16} << 30)) {
    std::fprintf(stderr, "alloc_story: at most 16 GiB leaked\n");
    return 2;
  }

  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR1, &action, nullptr);

  const std::uint64_t start = monotonic_ns();
  make_small_records(small);
  make_buffers(buffers);
  make_objects_with_new(news);
  raise_signals(signals);
  const std::uint64_t leaked = leak_blocks(leaks);
  const std::uint64_t elapsed = monotonic_ns() - start;

  report("pid", static_cast<std::uint64_t>(getpid()));
  reportSite("make_small_records", small, kSmallBytes);
  reportSite("make_buffers", buffers, kBufferBytes);
  reportSite("make_objects_with_new", news, kNewBytes);
  reportSite("allocate_in_handler", signals * kHandlerBlocksPerSignal, kHandlerBytes);
  reportSite("leak_blocks", leaks, kLeakBytes);
  report("leaked_bytes", leaked);
  report("allocations", small + buffers + news + signals * kHandlerBlocksPerSignal + leaks);
  report("elapsed_ns", elapsed);
  return 0;
}
