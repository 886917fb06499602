/* Kernel + user stack capture into an event's `struct event_stack`.
 *
 *   struct cpu_sample_event *e = scratch_event(0);
 *   ...
 *   capture_stacks(ctx, &e->stack);
 *   submit_event(e, event_size_with_stack(offsetof(struct cpu_sample_event, stack),
 *                                         &e->stack), LOST_CPU_SAMPLES);
 *
 * Kernel frames are written first, user frames right after them (each leaf
 * first). User stacks are frame-pointer walks by the kernel: objects built
 * without frame pointers (Debian's libc) end the walk early.
 */
#ifndef INCISE_BPF_STACK_BPF_H
#define INCISE_BPF_STACK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/events.h"

#define STACK_BYTES (MAX_STACK_DEPTH * sizeof(__u64))

/* Frames of one walk into `frames` (room for MAX_STACK_DEPTH), leaf first;
 * returns how many. `ctx` is the program's context: bpf_get_stack finds the
 * registers through it. */
static __always_inline __u32 walk_kernel_stack(void* ctx, __u64* frames) {
  long bytes = bpf_get_stack(ctx, frames, STACK_BYTES, 0);
  if (bytes < 0) bytes = 0;
  __u32 count = (__u32)bytes / sizeof(__u64);
  return count > MAX_STACK_DEPTH ? MAX_STACK_DEPTH : count;
}

static __always_inline __u32 walk_user_stack(void* ctx, __u64* frames) {
  long bytes = bpf_get_stack(ctx, frames, STACK_BYTES, BPF_F_USER_STACK);
  if (bytes < 0) bytes = 0;
  __u32 count = (__u32)bytes / sizeof(__u64);
  return count > MAX_STACK_DEPTH ? MAX_STACK_DEPTH : count;
}

static __always_inline void capture_stacks(void* ctx, struct event_stack* stack) {
  __u32 kernel_count = walk_kernel_stack(ctx, stack->frames);
  stack->user_count = walk_user_stack(ctx, &stack->frames[kernel_count]);
  stack->kernel_count = kernel_count;
  stack->reserved = 0;
}

/* Only the user stack (for events whose kernel part is always the same). */
static __always_inline void capture_user_stack(void* ctx, struct event_stack* stack) {
  stack->user_count = walk_user_stack(ctx, stack->frames);
  stack->kernel_count = 0;
  stack->reserved = 0;
}

static __always_inline void clear_stack(struct event_stack* stack) {
  stack->kernel_count = 0;
  stack->user_count = 0;
  stack->reserved = 0;
}

/* Bytes of a record whose stack starts `stack_offset` bytes in. */
static __always_inline __u64 event_size_with_stack(__u64 stack_offset,
                                                   const struct event_stack* stack) {
  return stack_offset + __builtin_offsetof(struct event_stack, frames) +
         ((__u64)stack->kernel_count + stack->user_count) * sizeof(__u64);
}

#endif /* INCISE_BPF_STACK_BPF_H */
