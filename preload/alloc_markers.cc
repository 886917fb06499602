#include "preload/alloc_markers.h"

// Each marker is a 5-byte NOP and a RET, written out so the compiler cannot
// drop the call or change the first instruction: a kernel with optimized
// uprobes (x86, 6.18 onwards) turns a probe on a 5-byte NOP into a call of
// its trampoline after the first hit, far cheaper than the breakpoint trap
// and single step of a probe on any other instruction. The arguments stay
// in their registers for the probe; the stack walk starts at the caller.
extern "C" {

__attribute__((visibility("default"), naked, noinline, used)) void incise_alloc_sampled(
    void* /*block*/, size_t /*size*/, uint64_t /*weight*/, const void* /*caller*/) {
  asm volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\tret");
}

__attribute__((visibility("default"), naked, noinline, used)) void incise_free_sampled(
    void* /*block*/) {
  asm volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\tret");
}
}
