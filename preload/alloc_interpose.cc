// malloc, calloc, realloc, reallocarray, free, aligned_alloc,
// posix_memalign, memalign, valloc, pvalloc, and anonymous mmap and munmap,
// each forwarded to the next allocator (preload/alloc_next.h). With
// INCISE_ALLOC_SAMPLE_BYTES set, allocations are sampled in process
// (preload/alloc_sampler.h); a sampled block is remembered
// (preload/sampled_blocks.h) and reported to the recorder's probes through
// the marker functions (preload/alloc_markers.h), and so is its free. C++'s
// operator new and delete reach these through malloc and free.
//
// Safe wherever the program may allocate: before this library's
// constructor (the next allocator is found on first use), inside dlsym (the
// static arena), in signal handlers (no locks; the table is lock-free), in
// a forked child (it inherits the table with the blocks) and across exec
// (a new image starts without state; the variable stays in the environment).
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>

#include "preload/alloc_markers.h"
#include "preload/alloc_next.h"
#include "preload/alloc_sampler.h"
#include "preload/sampled_blocks.h"

namespace incise::preload {
namespace {

constexpr size_t kMallocAlignment = 16;

[[gnu::always_inline]] inline void noteAllocation(void* block, size_t size, const void* caller) {
  const uint64_t weight = sampleAllocation(size);
  if (weight == 0 || !sampledBlocks().insert(block)) return;
  incise_alloc_sampled(block, size, weight, caller);
}

[[gnu::always_inline]] inline void noteFree(void* block) {
  if (sampledBlocks().erase(block)) incise_free_sampled(block);
}

bool multiplyOverflows(size_t count, size_t size, size_t* product) {
  return __builtin_mul_overflow(count, size, product);
}

// realloc of an arena block (from dlsym's own start-up): it is copied out,
// the arena keeps the old bytes.
void* moveFromArena(void* block, size_t size, const NextAllocator* next) {
  void* moved = next ? next->malloc(size) : bootstrapAllocate(size, kMallocAlignment);
  if (moved) {
    const size_t old_size = bootstrapSize(block);
    std::memcpy(moved, block, old_size < size ? old_size : size);
  }
  return moved;
}

void* reallocate(void* block, size_t size, const void* caller) {
  const NextAllocator* next = nextAllocator();
  if (block && isBootstrapBlock(block)) {
    void* moved = moveFromArena(block, size, next);
    if (moved && next) noteAllocation(moved, size, caller);
    return moved;
  }
  if (!next) return nullptr;  // this thread is resolving: no real block to grow
  // The old block is forgotten before it can be freed and handed out again.
  if (block) noteFree(block);
  void* moved = next->realloc(block, size);
  if (moved) noteAllocation(moved, size, caller);
  return moved;
}

void* mapMemory(void* address, size_t length, int prot, int flags, int fd, off_t offset,
                const void* caller) {
  const NextAllocator* next = nextAllocator();
  if (!next) {
    errno = ENOMEM;
    return MAP_FAILED;
  }
  void* mapped = next->mmap(address, length, prot, flags, fd, offset);
  if (mapped != MAP_FAILED && (flags & MAP_ANONYMOUS)) noteAllocation(mapped, length, caller);
  return mapped;
}

__attribute__((constructor)) void startSampling() {
  configureSampling(getenv(kSampleBytesVariable));
  nextAllocator();
}

}  // namespace
}  // namespace incise::preload

using namespace incise::preload;

#define INCISE_EXPORT extern "C" __attribute__((visibility("default")))

INCISE_EXPORT void* malloc(size_t size) noexcept {
  const NextAllocator* next = nextAllocator();
  if (!next) return bootstrapAllocate(size, kMallocAlignment);
  void* block = next->malloc(size);
  if (block) noteAllocation(block, size, __builtin_return_address(0));
  return block;
}

INCISE_EXPORT void free(void* block) noexcept {
  if (!block || isBootstrapBlock(block)) return;
  const NextAllocator* next = nextAllocator();
  if (!next) return;  // a block from before this thread resolved: kept
  noteFree(block);
  next->free(block);
}

INCISE_EXPORT void* calloc(size_t count, size_t size) noexcept {
  size_t bytes = 0;
  if (multiplyOverflows(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  const NextAllocator* next = nextAllocator();
  if (!next) return bootstrapAllocate(bytes, kMallocAlignment);  // the arena is zeroed
  void* block = next->calloc(count, size);
  if (block) noteAllocation(block, bytes, __builtin_return_address(0));
  return block;
}

INCISE_EXPORT void* realloc(void* block, size_t size) noexcept {
  return reallocate(block, size, __builtin_return_address(0));
}

INCISE_EXPORT void* reallocarray(void* block, size_t count, size_t size) noexcept {
  size_t bytes = 0;
  if (multiplyOverflows(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return reallocate(block, bytes, __builtin_return_address(0));
}

INCISE_EXPORT void* aligned_alloc(size_t alignment, size_t size) noexcept {
  const NextAllocator* next = nextAllocator();
  if (!next) return bootstrapAllocate(size, alignment);
  void* block = next->aligned_alloc(alignment, size);
  if (block) noteAllocation(block, size, __builtin_return_address(0));
  return block;
}

INCISE_EXPORT int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  const NextAllocator* next = nextAllocator();
  if (!next) {
    *out = bootstrapAllocate(size, alignment);
    return *out ? 0 : ENOMEM;
  }
  const int error = next->posix_memalign(out, alignment, size);
  if (error == 0) noteAllocation(*out, size, __builtin_return_address(0));
  return error;
}

INCISE_EXPORT void* memalign(size_t alignment, size_t size) noexcept {
  const NextAllocator* next = nextAllocator();
  if (!next) return bootstrapAllocate(size, alignment);
  void* block = next->memalign(alignment, size);
  if (block) noteAllocation(block, size, __builtin_return_address(0));
  return block;
}

INCISE_EXPORT void* valloc(size_t size) noexcept {
  const NextAllocator* next = nextAllocator();
  if (!next) return bootstrapAllocate(size, 4096);
  void* block = next->valloc(size);
  if (block) noteAllocation(block, size, __builtin_return_address(0));
  return block;
}

INCISE_EXPORT void* pvalloc(size_t size) noexcept {
  const NextAllocator* next = nextAllocator();
  if (!next) return bootstrapAllocate((size + 4095) & ~size_t{4095}, 4096);
  void* block = next->pvalloc(size);
  if (block) noteAllocation(block, size, __builtin_return_address(0));
  return block;
}

INCISE_EXPORT void* mmap(void* address, size_t length, int prot, int flags, int fd,
                         off_t offset) noexcept {
  return mapMemory(address, length, prot, flags, fd, offset, __builtin_return_address(0));
}

// _FILE_OFFSET_BITS=64 programs call it by this name (the same function on x86-64).
INCISE_EXPORT void* mmap64(void* address, size_t length, int prot, int flags, int fd,
                           off64_t offset) noexcept {
  return mapMemory(address, length, prot, flags, fd, offset, __builtin_return_address(0));
}

INCISE_EXPORT int munmap(void* address, size_t length) noexcept {
  const NextAllocator* next = nextAllocator();
  if (!next) {
    errno = EINVAL;
    return -1;
  }
  noteFree(address);
  return next->munmap(address, length);
}
