/* Lock calls in progress (uprobes of `--locks all` and --lock-probe), shared
 * by the lock object, which fills it, and the scheduler object, which looks
 * a thread up when it blocks in a futex wait: a wait inside a probed lock
 * call marks that call contended instead of becoming a wait row of its own.
 * The recorder makes the two objects' `pending_calls` maps one
 * (recorder/shared_map.h).
 *
 *   // lock_enter (uprobe): bpf_map_update_elem(&pending_calls, &tid, &call, BPF_ANY);
 *   // blocking switch in a futex wait:
 *   if (futex_wait_in_lock_call(tid, owner)) ...   // the call's record carries it
 */
#ifndef INCISE_BPF_LOCK_CALLS_BPF_H
#define INCISE_BPF_LOCK_CALLS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* Threads with per-thread state in a map at once. */
#define MAX_THREADS 16384

/* A lock call in progress on a thread (one at a time per thread). */
struct pending_call {
  __u64 request_ns;
  __u64 address;
  __u32 cookie;
  __u32 futex_waited;
  __u32 holder_tid; /* the lock's owner when the call first blocked; 0 = unknown */
  __u32 pad;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_THREADS);
  __type(key, __u32);
  __type(value, struct pending_call);
} pending_calls SEC(".maps");

/* Marks the thread's lock call in progress, if any, as having waited, with
 * the owner its first block read from the lock. */
static __always_inline bool futex_wait_in_lock_call(__u32 tid, __u32 holder_tid) {
  struct pending_call* call = bpf_map_lookup_elem(&pending_calls, &tid);
  if (!call) return false;
  if (!call->futex_waited) call->holder_tid = holder_tid;
  call->futex_waited = 1;
  return true;
}

#endif /* INCISE_BPF_LOCK_CALLS_BPF_H */
