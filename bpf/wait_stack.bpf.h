/* The user stack of a thread in a futex wait, walked once per wait.
 *
 * A contended wait used to walk the same user stack twice: at the blocking
 * switch (the off-CPU stack, bpf/sched.bpf.c) and at the wait's end (the lock
 * row's stack, bpf/locks.bpf.c). The thread stays inside the syscall between
 * the two, so its user registers and frames cannot change: the futex entry
 * walks the stack once into `wait_user_stacks`, and every stack taken while
 * the thread is still in that wait copies it instead of walking again
 * (futex exit on lock_story: 3.3 -> 0.7 us per run with bpf_get_stack's
 * walk). The walk is at the entry rather than at the blocking switch
 * because the switch runs with the runqueue lock held and interrupts off
 * (wake-ups of that CPU wait for it), and the wait's end is on the lock
 * hand-off's critical path (the waiter is about to become the holder); the
 * entry is the waiter's own preemptible syscall, and a wait that ends
 * without blocking (EAGAIN) also costs one walk, as before.
 *
 * Both objects include this header; the recorder makes their two
 * `wait_user_stacks` maps one (recorder/shared_map.h). Without the lock
 * source nothing is remembered and the switch walks as before.
 *
 *   // futex wait entry (locks.bpf.c), not inside a probed lock call:
 *   remember_wait_stack(ctx, tid, scratch_event(0));
 *   // any stack of that thread while it waits (switch, wait end):
 *   capture_stacks_in_wait(ctx, &e->stack, tid, with_kernel);
 *   // futex exit (locks.bpf.c) / thread exit (sched.bpf.c):
 *   end_wait_stack(tid);  drop_wait_stack(tid);
 */
#ifndef INCISE_BPF_WAIT_STACK_BPF_H
#define INCISE_BPF_WAIT_STACK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/events.h"
#include "bpf/stack.bpf.h"

/* Threads with per-thread state in a map at once. */
#define MAX_THREADS 16384

struct wait_user_stack {
  __u32 in_wait; /* set at the futex wait's entry, cleared at its exit */
  __u32 user_count;
  __u64 frames[MAX_STACK_DEPTH];
};

/* Entries are allocated on a thread's first wait, reused by its next ones
 * and deleted when it exits. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, MAX_THREADS);
  __type(key, __u32);
  __type(value, struct wait_user_stack);
} wait_user_stacks SEC(".maps");

/* `staging`: any buffer of at least sizeof(struct wait_user_stack) bytes
 * whose content does not matter (a free scratch slot), copied into a new
 * entry before the walk overwrites it. Without an entry (map full) nothing
 * is walked here: the later stacks walk themselves. */
static __always_inline void remember_wait_stack(void* ctx, __u32 tid, void* staging) {
  struct wait_user_stack* saved = bpf_map_lookup_elem(&wait_user_stacks, &tid);
  if (!saved) {
    if (!staging || bpf_map_update_elem(&wait_user_stacks, &tid, staging, BPF_NOEXIST) != 0) return;
    saved = bpf_map_lookup_elem(&wait_user_stacks, &tid);
    if (!saved) return;
  }
  saved->user_count = walk_user_stack(ctx, saved->frames);
  saved->in_wait = 1;
}

/* The remembered user stack into `frames` when `tid` is in a futex wait;
 * returns how many frames, or -1 when there is none to reuse. */
static __always_inline int copy_wait_stack(__u32 tid, __u64* frames) {
  struct wait_user_stack* saved = bpf_map_lookup_elem(&wait_user_stacks, &tid);
  if (!saved || !saved->in_wait) return -1;
  __u32 count = saved->user_count;
  if (count > MAX_STACK_DEPTH) count = MAX_STACK_DEPTH;
  if (bpf_probe_read_kernel(frames, count * sizeof(__u64), saved->frames) != 0) return -1;
  return (int)count;
}

/* capture_stacks (with_kernel) or capture_user_stack, the user part copied
 * from the thread's futex wait when it is in one. */
static __always_inline void capture_stacks_in_wait(void* ctx, struct event_stack* stack, __u32 tid,
                                                   bool with_kernel) {
  __u32 kernel_count = with_kernel ? walk_kernel_stack(ctx, stack->frames) : 0;
  int user_count = copy_wait_stack(tid, &stack->frames[kernel_count]);
  if (user_count < 0) user_count = walk_user_stack(ctx, &stack->frames[kernel_count]);
  stack->kernel_count = kernel_count;
  stack->user_count = user_count;
  stack->reserved = 0;
}

static __always_inline void end_wait_stack(__u32 tid) {
  struct wait_user_stack* saved = bpf_map_lookup_elem(&wait_user_stacks, &tid);
  if (saved) saved->in_wait = 0;
}

static __always_inline void drop_wait_stack(__u32 tid) {
  bpf_map_delete_elem(&wait_user_stacks, &tid);
}

#endif /* INCISE_BPF_WAIT_STACK_BPF_H */
