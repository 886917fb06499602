#include "preload/alloc_next.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace incise::preload {
namespace {

// dlsym's own allocations are a few small blocks; 256 KiB leaves room for a
// program whose early start-up allocates on other threads meanwhile.
constexpr size_t kArenaBytes = 256 << 10;
constexpr size_t kHeaderBytes = 16;  // the size asked for, before each block

alignas(4096) unsigned char g_arena[kArenaBytes];
std::atomic<size_t> g_arena_used{0};

NextAllocator g_next;
enum : int { kUnresolved, kPublishing, kResolved };
std::atomic<int> g_state{kUnresolved};
thread_local bool t_resolving = false;
thread_local NextAllocator t_found;

void* symbol(const char* name) {
  void* found = dlsym(RTLD_NEXT, name);
  if (!found) {
    const char message[] = "incise-preload: no next definition of an allocation function\n";
    ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
    (void)ignored;
    _exit(127);
  }
  return found;
}

template <typename Function>
void resolve(Function*& into, const char* name) {
  void* found = symbol(name);
  std::memcpy(&into, &found, sizeof into);
}

}  // namespace

const NextAllocator* nextAllocator() {
  if (g_state.load(std::memory_order_acquire) == kResolved) return &g_next;
  if (t_resolving) return nullptr;
  t_resolving = true;
  // Threads that get here together each look the symbols up into their own
  // copy (no thread waits for another: one may hold the loader's lock); the
  // first to finish publishes its copy.
  NextAllocator& found = t_found;
  resolve(found.malloc, "malloc");
  resolve(found.free, "free");
  resolve(found.calloc, "calloc");
  resolve(found.realloc, "realloc");
  resolve(found.aligned_alloc, "aligned_alloc");
  resolve(found.posix_memalign, "posix_memalign");
  resolve(found.memalign, "memalign");
  resolve(found.valloc, "valloc");
  resolve(found.pvalloc, "pvalloc");
  resolve(found.mmap, "mmap");
  resolve(found.munmap, "munmap");
  t_resolving = false;
  int expected = kUnresolved;
  if (g_state.compare_exchange_strong(expected, kPublishing, std::memory_order_acq_rel)) {
    g_next = found;
    g_state.store(kResolved, std::memory_order_release);
  }
  return &found;
}

void* bootstrapAllocate(size_t size, size_t alignment) {
  if (alignment < kHeaderBytes) alignment = kHeaderBytes;
  if (alignment > 4096 || size > kArenaBytes) return nullptr;
  const size_t needed = kHeaderBytes + alignment + size;  // header, room to align, block
  const size_t start = g_arena_used.fetch_add(needed, std::memory_order_relaxed);
  if (start + needed > kArenaBytes) return nullptr;
  uintptr_t block = reinterpret_cast<uintptr_t>(g_arena + start) + kHeaderBytes;
  block = (block + alignment - 1) & ~(uintptr_t{alignment} - 1);
  std::memcpy(reinterpret_cast<void*>(block - kHeaderBytes), &size, sizeof size);
  return reinterpret_cast<void*>(block);
}

bool isBootstrapBlock(const void* block) {
  const auto* byte = static_cast<const unsigned char*>(block);
  return byte >= g_arena && byte < g_arena + kArenaBytes;
}

size_t bootstrapSize(const void* block) {
  size_t size = 0;
  std::memcpy(&size, static_cast<const unsigned char*>(block) - kHeaderBytes, sizeof size);
  return size;
}

}  // namespace incise::preload
