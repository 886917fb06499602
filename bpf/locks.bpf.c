// SPDX-License-Identifier: GPL-2.0
/* Lock calls through uprobes (mode `all`, and every --lock-probe): request at
 * entry, acquired at return, release at the unlock (the README's lock section
 * says what each mode sees and costs). Contended futex waits are not seen
 * here but at their blocking context switch (bpf/sched.bpf.c,
 * bpf/futex_wait.bpf.h); a wait inside a probed call marks the call
 * contended (`pending_calls`, bpf/lock_calls.bpf.h) instead of becoming a
 * wait of its own.
 *
 * Which thread released a lock to a waiter: the last thread that unlocked
 * that address in that process, kept in an LRU map.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/context.bpf.h"
#include "bpf/event_output.bpf.h"
#include "bpf/lock_calls.bpf.h"
#include "bpf/locks.h"
#include "bpf/stack.bpf.h"
#include "bpf/target_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* An acquire slower than this (call to return) counts as contended even
 * when no futex wait was seen: spin locks and custom locks never wait in
 * the kernel. Above the ~2 x 16 us that the entry and return probes add. */
const volatile __u64 contended_threshold_ns = 50000;

struct held_key {
  __u32 tid;
  __u32 pad;
  __u64 address;
};

struct held_lock {
  __u32 depth;
  __u32 flags;
};

struct address_key {
  __u32 tgid;
  __u32 pad;
  __u64 address;
};

struct last_release {
  __u64 time_ns;
  __u32 tid;
  __u32 pad;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct held_key);
  __type(value, struct held_lock);
} held_locks SEC(".maps");

/* Who last unlocked an address: the releaser of its waiters. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, struct address_key);
  __type(value, struct last_release);
} last_releases SEC(".maps");

static __always_inline void note_release(__u32 tgid, __u32 tid, __u64 address, __u64 now) {
  struct address_key key = {.tgid = tgid, .address = address};
  struct last_release value = {.time_ns = now, .tid = tid};
  bpf_map_update_elem(&last_releases, &key, &value, BPF_ANY);
}

/* The thread that released `address` at or after `since_ns`; 0 = unknown. */
static __always_inline __u32 releaser_since(__u32 tgid, __u32 self, __u64 address, __u64 since_ns) {
  struct address_key key = {.tgid = tgid, .address = address};
  struct last_release* last = bpf_map_lookup_elem(&last_releases, &key);
  if (!last || last->tid == self || last->time_ns < since_ns) return 0;
  return last->tid;
}

/* Uprobe programs run in the thread's own context and never interrupt each
 * other on a CPU, so they share scratch slot 0. */
static __always_inline void submit_lock_event(struct lock_event* e) {
  submit_event(e, event_size_with_stack(__builtin_offsetof(struct lock_event, stack), &e->stack),
               LOST_LOCKS);
}

/* From a uretprobe. Its kernel stack is always the trap path. */
static __always_inline void send_lock_event(void* ctx, struct lock_event* e) {
  capture_user_stack(ctx, &e->stack);
  submit_lock_event(e);
}

/* ---- uprobes: one program per role; the attach cookie says which lock ---- */

SEC("uprobe")
int BPF_KPROBE(lock_enter, void* lock) {
  __u64 id = bpf_get_current_pid_tgid();
  if (!is_target(id >> 32)) return 0;
  __u32 tid = (__u32)id;
  struct pending_call call = {
      .request_ns = bpf_ktime_get_ns(),
      .address = (__u64)lock,
      .cookie = (__u32)bpf_get_attach_cookie(ctx),
  };
  if (bpf_map_update_elem(&pending_calls, &tid, &call, BPF_ANY) != 0) count_drop(LOST_LOCKS);
  return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(lock_return, long result) {
  __u64 now = bpf_ktime_get_ns();
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tid = (__u32)id;
  __u32 tgid = id >> 32;
  struct pending_call* call = bpf_map_lookup_elem(&pending_calls, &tid);
  if (!call) return 0;
  struct pending_call seen = *call;
  bpf_map_delete_elem(&pending_calls, &tid);

  __u32 kind = seen.cookie & 0xff;
  bool is_try = seen.cookie & LOCK_COOKIE_TRY;
  /* Custom acquire functions have no return convention we know: assume success. */
  bool acquired = kind == LOCK_KIND_CUSTOM || result == 0;
  if (!acquired && !is_try) return 0; /* EINVAL, EDEADLK...: nothing was locked */

  __u32 flags = 0;
  if (seen.futex_waited || now - seen.request_ns > contended_threshold_ns)
    flags |= LOCK_FLAG_CONTENDED;

  if (acquired) {
    struct held_key key = {.tid = tid, .address = seen.address};
    struct held_lock* held = bpf_map_lookup_elem(&held_locks, &key);
    if (held) {
      /* Re-acquired while held (recursive mutex, nested read lock): folded
       * into the outer critical section, whose release says so. */
      held->depth += 1;
      held->flags |= LOCK_FLAG_RECURSIVE;
      return 0;
    }
    struct held_lock fresh = {.depth = 1};
    if (bpf_map_update_elem(&held_locks, &key, &fresh, BPF_NOEXIST) != 0) {
      count_drop(LOST_LOCKS);
      return 0;
    }
  } else {
    flags |= LOCK_FLAG_TRY_FAILED;
  }

  read_contexts(tgid, tid);
  struct lock_event* e = scratch_event(0);
  if (!e) return 0;
  fill_header(&e->header, EVENT_LOCK);
  e->header.time = now;
  e->request_ns = seen.request_ns;
  e->release_ns = acquired ? 0 : now;
  e->address = seen.address;
  e->kind = kind;
  e->flags = flags;
  e->releaser_tid =
      (flags & LOCK_FLAG_CONTENDED) ? releaser_since(tgid, tid, seen.address, seen.request_ns) : 0;
  e->expects_release = acquired;
  e->holder_tid = seen.holder_tid;
  e->holder_state = 0;
  send_lock_event(ctx, e);
  return 0;
}

SEC("uprobe")
int BPF_KPROBE(lock_release, void* lock) {
  __u64 now = bpf_ktime_get_ns();
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  if (!is_target(tgid)) return 0;
  __u32 tid = (__u32)id;
  note_release(tgid, tid, (__u64)lock, now);

  struct held_key key = {.tid = tid, .address = (__u64)lock};
  struct held_lock* held = bpf_map_lookup_elem(&held_locks, &key);
  if (!held) return 0; /* acquired before recording started */
  if (held->depth > 1) {
    held->depth -= 1;
    return 0;
  }
  __u32 flags = held->flags;
  bpf_map_delete_elem(&held_locks, &key);

  struct lock_release_event e = {.address = (__u64)lock, .flags = flags};
  fill_header(&e.header, EVENT_LOCK_RELEASE);
  e.header.time = now;
  submit_event(&e, sizeof(e), LOST_LOCKS);
  return 0;
}
