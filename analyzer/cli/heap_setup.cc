#include "analyzer/cli/heap_setup.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#include "analyzer/cli/sanitizer_build.h"

namespace incise::analyzer {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kAdvisedHeap = size_t{64} << 20;
// glibc's largest accepted mmap threshold on 64-bit.
constexpr size_t kMmapThreshold = size_t{32} << 20;
constexpr size_t kTrimThreshold = size_t{256} << 20;

uintptr_t alignUp(uintptr_t value) {
  return (value + kHugePage - 1) & ~(kHugePage - 1);
}
uintptr_t alignDown(uintptr_t value) {
  return value & ~(kHugePage - 1);
}

}  // namespace

void setUpReportHeap() {
  if constexpr (kSanitizerBuild) return;
  // Each is only a hint: a refused one leaves glibc's default, never an error.
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThreshold));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(kTrimThreshold));
  // Grow the heap once by kAdvisedHeap (virtual memory only: nothing is
  // touched) and advise that stretch; later growth keeps 4 KiB pages.
  mallopt(M_TOP_PAD, static_cast<int>(kAdvisedHeap));
  const auto before = reinterpret_cast<uintptr_t>(sbrk(0));
  void* grow = std::malloc(size_t{1} << 20);
  const auto after = reinterpret_cast<uintptr_t>(sbrk(0));
  if (grow != nullptr && before != static_cast<uintptr_t>(-1) && after > before &&
      alignDown(after) > alignUp(before)) {
    madvise(reinterpret_cast<void*>(alignUp(before)), alignDown(after) - alignUp(before),
            MADV_HUGEPAGE);
  }
  std::free(grow);
}

}  // namespace incise::analyzer
