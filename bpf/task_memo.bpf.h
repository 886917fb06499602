/* Per-thread memos kept in task local storage, made only up to a bound of
 * threads holding one at a time, and given back at the thread's exit (the
 * scheduler program's stack memos: bpf/wait_stack.bpf.h,
 * bpf/kernel_wait_stack.bpf.h).
 *
 *   struct memo* m = task_memo_new(&memos, &memo_holders, MEMO_THREADS, task);
 *   task_memo_release(&memos, &memo_holders, task);  // at the thread's exit
 *
 * Task storage has no entry bound of its own; the count of holders is. It
 * is approximate under races (two CPUs making memos at once), which a bound
 * on memory can be. */
#ifndef INCISE_BPF_TASK_MEMO_BPF_H
#define INCISE_BPF_TASK_MEMO_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/stack.bpf.h"

/* `task`'s memo, made if it has none and the bound allows; never for an
 * exiting thread (its exit already gave its memo back). */
static __always_inline void* task_memo_new(void* map, __u64* holders, __u64 bound,
                                           struct task_struct* task) {
  if ((task->flags & PF_EXITING) || *holders >= bound) return NULL;
  void* memo = bpf_task_storage_get(map, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (memo) __sync_fetch_and_add(holders, 1);
  return memo;
}

static __always_inline void task_memo_release(void* map, __u64* holders, struct task_struct* task) {
  if (bpf_task_storage_delete(map, task) == 0) __sync_fetch_and_sub(holders, 1);
}

#endif /* INCISE_BPF_TASK_MEMO_BPF_H */
