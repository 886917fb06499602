// The allocator this library stands in front of: the next definitions of
// malloc and the rest in the lookup order (the C library's, or an allocator
// the program links), found with dlsym(RTLD_NEXT). dlsym may allocate
// itself (its error state), so a thread that allocates while it resolves
// them is served from a small static arena whose blocks are never freed.
//
//   const NextAllocator* next = nextAllocator();
//   void* block = next ? next->malloc(size) : bootstrapAllocate(size, 16);
//   ...
//   if (isBootstrapBlock(block)) return;   // in free: nothing to give back
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace incise::preload {

struct NextAllocator {
  void* (*malloc)(size_t);
  void (*free)(void*);
  void* (*calloc)(size_t, size_t);
  void* (*realloc)(void*, size_t);
  void* (*aligned_alloc)(size_t, size_t);
  int (*posix_memalign)(void**, size_t, size_t);
  void* (*memalign)(size_t, size_t);
  void* (*valloc)(size_t);
  void* (*pvalloc)(size_t);
  void* (*mmap)(void*, size_t, int, int, int, off_t);
  int (*munmap)(void*, size_t);
};

// null while this thread is resolving them (use the arena then).
const NextAllocator* nextAllocator();

// `size` bytes aligned to `alignment` (a power of two, at most a page) from
// the static arena; null when it is used up.
void* bootstrapAllocate(size_t size, size_t alignment);
bool isBootstrapBlock(const void* block);
// The size asked for when `block` was handed out.
size_t bootstrapSize(const void* block);

}  // namespace incise::preload
