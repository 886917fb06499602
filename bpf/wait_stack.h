/* Shared by bpf/wait_stack.bpf.h and the recorder (recorder/sources/sched_source.cc):
 * the slots of the per-CPU `wait_stack_counts` array, how each switch-out
 * and waker user stack and each switch-out kernel stack
 * (bpf/kernel_wait_stack.bpf.h) was had.
 *
 *   __u64 reused = sum over cpus of wait_stack_counts[WAIT_STACK_REUSED];
 *
 * Each kind of stack has its three slots in one order: reused, walked and
 * kept, not kept.
 */
#ifndef INCISE_BPF_WAIT_STACK_H
#define INCISE_BPF_WAIT_STACK_H

/* Threads that hold a memo of their places' user stacks at a time; one past
 * that walks every time (bpf/wait_stack.bpf.h). */
#define WAIT_STACK_MEMO_THREADS 4096

enum wait_stack_count_slot {
  WAIT_STACK_REUSED = 0,   /* frames copied from an earlier walk at the same place */
  WAIT_STACK_WALKED = 1,   /* a CFI walk, kept for reuse */
  WAIT_STACK_NOT_KEPT = 2, /* a frame-pointer walk, or a walk that cannot be reused */
  KERNEL_STACK_REUSED = 3, /* kernel frames copied from an earlier walk at the same place */
  KERNEL_STACK_WALKED = 4, /* a kernel walk, kept for reuse */
  KERNEL_STACK_NOT_KEPT = 5,
  WAIT_STACK_COUNTS
};

#endif /* INCISE_BPF_WAIT_STACK_H */
