// SPDX-License-Identifier: GPL-2.0
/* Lock tracing, two ways at once (the README's lock section says what each
 * mode sees and costs):
 *
 * - futex syscall tracepoints see every wait on a futex word: a contended
 *   pthread mutex (the futex word is the mutex itself), rwlock, condition
 *   variable, semaphore or join. They cost nothing on uncontended paths,
 *   which never enter the kernel. Mode `contended` is only this.
 * - uprobes (mode `all`, and every --lock-probe) see each call: request at
 *   entry, acquired at return, release at the unlock. A futex wait that
 *   happens inside such a call is folded into its record (contended flag)
 *   instead of becoming a record of its own.
 *
 * Which thread released a lock to a waiter: the last thread that unlocked
 * (uprobe) or FUTEX_WAKEd that address in that process, kept in an LRU map.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/event_output.bpf.h"
#include "bpf/locks.h"
#include "bpf/stack.bpf.h"
#include "bpf/target_filter.bpf.h"
#include "bpf/wait_stack.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* An acquire slower than this (call to return) counts as contended even
 * when no futex wait was seen: spin locks and custom locks never wait in
 * the kernel. Above the ~2 x 16 us that the entry and return probes add. */
const volatile __u64 contended_threshold_ns = 50000;

#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_REQUEUE 3
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAKE_OP 5
#define FUTEX_LOCK_PI 6
#define FUTEX_UNLOCK_PI 7
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAKE_BITSET 10
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_LOCK_PI2 13
#define FUTEX_CMD_MASK (~(128 | 256)) /* without PRIVATE and CLOCK_REALTIME */
#define NR_FUTEX 202                  /* x86-64 */
#define EAGAIN 11

/* A lock call in progress on a thread (one at a time per thread). */
struct pending_call {
  __u64 request_ns;
  __u64 address;
  __u32 cookie;
  __u32 futex_waited;
};

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

struct futex_wait {
  __u64 uaddr;
  __u64 start_ns;
  __u32 inside_lock_call;
  __u32 pad;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_THREADS);
  __type(key, __u32);
  __type(value, struct pending_call);
} pending_calls SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct held_key);
  __type(value, struct held_lock);
} held_locks SEC(".maps");

/* Who last unlocked or FUTEX_WAKEd an address: the releaser of its waiters. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, struct address_key);
  __type(value, struct last_release);
} last_releases SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_THREADS);
  __type(key, __u32);
  __type(value, struct futex_wait);
} futex_waits SEC(".maps");

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

/* Uprobe and syscall programs run in the thread's own context and never
 * interrupt each other on a CPU, so they share scratch slot 0. */
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

/* ---- futex syscall: contended waits and the wakes that end them ---- */

static __always_inline bool is_wait(int cmd) {
  return cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET || cmd == FUTEX_LOCK_PI ||
         cmd == FUTEX_LOCK_PI2 || cmd == FUTEX_WAIT_REQUEUE_PI;
}

static __always_inline bool is_wake(int cmd) {
  return cmd == FUTEX_WAKE || cmd == FUTEX_WAKE_BITSET || cmd == FUTEX_UNLOCK_PI ||
         cmd == FUTEX_WAKE_OP || cmd == FUTEX_REQUEUE || cmd == FUTEX_CMP_REQUEUE;
}

static __always_inline void on_futex_enter(void* ctx, __u64 uaddr, int op) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  if (!is_target(tgid)) return;
  __u32 tid = (__u32)id;
  int cmd = op & FUTEX_CMD_MASK;
  __u64 now = bpf_ktime_get_ns();
  if (is_wake(cmd)) {
    note_release(tgid, tid, uaddr, now);
    return;
  }
  if (!is_wait(cmd)) return;
  struct futex_wait wait = {.uaddr = uaddr, .start_ns = now};
  struct pending_call* call = bpf_map_lookup_elem(&pending_calls, &tid);
  if (call) {
    call->futex_waited = 1;
    wait.inside_lock_call = 1;
  }
  if (bpf_map_update_elem(&futex_waits, &tid, &wait, BPF_ANY) != 0) {
    count_drop(LOST_LOCKS);
    return;
  }
  /* A wait inside a probed call is reported by the call's return, whose
   * stack is the caller's: nothing here to reuse. */
  if (!wait.inside_lock_call) remember_wait_stack(ctx, tid, scratch_event(0));
}

static __always_inline void on_futex_exit(void* ctx, long ret) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tid = (__u32)id;
  __u32 tgid = id >> 32;
  struct futex_wait* found = bpf_map_lookup_elem(&futex_waits, &tid);
  if (!found) return;
  struct futex_wait wait = *found;
  bpf_map_delete_elem(&futex_waits, &tid);
  if (wait.inside_lock_call) return; /* the lock call's record carries it */

  /* Woken (0): the wake came during the wait. EAGAIN: the word changed just
   * before the wait, by a release whose wake came first. Anything else
   * (timeout, signal): nobody released it to us. */
  __u32 releaser = 0;
  if (ret == 0)
    releaser = releaser_since(tgid, tid, wait.uaddr, wait.start_ns);
  else if (ret == -EAGAIN)
    releaser = releaser_since(tgid, tid, wait.uaddr, 0);

  struct lock_event* e = scratch_event(0);
  if (!e) {
    end_wait_stack(tid);
    return;
  }
  fill_header(&e->header, EVENT_FUTEX);
  e->request_ns = wait.start_ns;
  e->release_ns = 0;
  e->address = wait.uaddr;
  e->kind = LOCK_KIND_FUTEX;
  e->flags = LOCK_FLAG_CONTENDED | LOCK_FLAG_CONTENDED_ONLY;
  e->releaser_tid = releaser;
  e->expects_release = 0;
  /* The stack walked at the wait's start: the thread never left the syscall. */
  capture_stacks_in_wait(ctx, &e->stack, tid, false);
  end_wait_stack(tid);
  submit_lock_event(e);
}

SEC("tracepoint/syscalls/sys_enter_futex")
int futex_enter_tp(struct trace_event_raw_sys_enter* ctx) {
  on_futex_enter(ctx, ctx->args[0], (int)ctx->args[1]);
  return 0;
}

SEC("tracepoint/syscalls/sys_exit_futex")
int futex_exit_tp(struct trace_event_raw_sys_exit* ctx) {
  on_futex_exit(ctx, ctx->ret);
  return 0;
}

/* Without tracefs: every syscall, filtered here on the futex number. */
SEC("raw_tp/sys_enter")
int futex_enter_raw(struct bpf_raw_tracepoint_args* ctx) {
  if (ctx->args[1] != NR_FUTEX) return 0;
  struct pt_regs* regs = (struct pt_regs*)ctx->args[0];
  on_futex_enter(ctx, BPF_CORE_READ(regs, di), (int)BPF_CORE_READ(regs, si));
  return 0;
}

SEC("raw_tp/sys_exit")
int futex_exit_raw(struct bpf_raw_tracepoint_args* ctx) {
  struct pt_regs* regs = (struct pt_regs*)ctx->args[0];
  if (BPF_CORE_READ(regs, orig_ax) != NR_FUTEX) return 0;
  on_futex_exit(ctx, (long)ctx->args[1]);
  return 0;
}
