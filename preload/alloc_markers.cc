#include "preload/alloc_markers.h"

// noinline and an empty asm that uses every argument: the call and its
// arguments in their registers stay, whatever the optimizer sees. Each body
// is a lone RET: the probe's stack walk starts at the caller's frame.
extern "C" {

__attribute__((visibility("default"), noinline, used)) void incise_alloc_sampled(
    void* block, size_t size, uint64_t weight, const void* caller) {
  asm volatile("" : : "r"(block), "r"(size), "r"(weight), "r"(caller) : "memory");
}

__attribute__((visibility("default"), noinline, used)) void incise_free_sampled(void* block) {
  asm volatile("" : : "r"(block) : "memory");
}
}
