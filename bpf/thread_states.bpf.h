/* Each target thread's state as its last switch or wake-up left it
 * (format::HolderState's values: running, runnable, sleeping, disk sleep),
 * for the state of a lock's holder when a wait on it begins
 * (bpf/futex_wait.bpf.h). Kept in the kernel: the recorder sees only the
 * switches whose rows are written, and a short block's are not.
 *
 *   set_thread_state(prev_tid, state_after_switch_out(prev_state));
 *   __u32 state = thread_state(holder_tid);
 *
 * One byte per thread id, in pages of THREAD_STATE_PAGE ids: a byte store
 * needs no read-modify-write that another cpu's store to a neighbour could
 * race. The recorder sizes the array to the kernel's pid_max. A tid reused
 * by a new thread reads the old one's state until the new one's first
 * switch. */
#ifndef INCISE_BPF_THREAD_STATES_BPF_H
#define INCISE_BPF_THREAD_STATES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/futex_wait.h"

struct thread_state_page {
  __u8 state[THREAD_STATE_PAGE];
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 8); /* the recorder sizes it: pid_max / THREAD_STATE_PAGE */
  __type(key, __u32);
  __type(value, struct thread_state_page);
} thread_states SEC(".maps");

/* include/linux/sched.h */
#define THREAD_STATE_INTERRUPTIBLE 0x1
#define THREAD_STATE_UNINTERRUPTIBLE 0x2

/* A thread's state after its switch-out with `prev_state` (0: preempted). */
static __always_inline __u8 state_after_switch_out(__u32 prev_state) {
  if (prev_state == 0) return HOLDER_RUNNABLE;
  if (prev_state & THREAD_STATE_UNINTERRUPTIBLE) return HOLDER_DISK_SLEEP;
  if (prev_state & THREAD_STATE_INTERRUPTIBLE) return HOLDER_SLEEPING;
  return HOLDER_OTHER;
}

static __always_inline void set_thread_state(__u32 tid, __u8 state) {
  __u32 page = tid / THREAD_STATE_PAGE;
  struct thread_state_page* states = bpf_map_lookup_elem(&thread_states, &page);
  if (states) states->state[tid & (THREAD_STATE_PAGE - 1)] = state;
}

/* HOLDER_UNKNOWN for a thread no switch of was seen. */
static __always_inline __u32 thread_state(__u32 tid) {
  __u32 page = tid / THREAD_STATE_PAGE;
  struct thread_state_page* states = bpf_map_lookup_elem(&thread_states, &page);
  return states ? states->state[tid & (THREAD_STATE_PAGE - 1)] : HOLDER_UNKNOWN;
}

#endif /* INCISE_BPF_THREAD_STATES_BPF_H */
