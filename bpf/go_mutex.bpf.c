// SPDX-License-Identifier: GPL-2.0
/* Go sync.Mutex, RWMutex and Cond waits through uprobes on the slow paths
 * only (recorder/sources/go_mutex_source.cc finds the addresses in the Go
 * binary):
 *
 *   go_lock_slow      sync.(*Mutex).lockSlow, first instruction: the fast
 *                     path's compare-and-swap failed; the wait starts
 *   go_lock_acquired  the RET of lockSlow: the goroutine holds the mutex
 *   go_unlock_slow    sync.(*Mutex).unlockSlow, first instruction: an unlock
 *                     that found waiters; it hands the mutex on
 *   go_unlock_done    each RET of unlockSlow: the slow unlock is sent (the
 *                     end of a hold while others waited)
 *   go_sema_wait      the first instruction of the runtime's RWMutex
 *                     semaphore acquire (a reader behind a writer, a writer
 *                     behind readers) or of notifyListWait (Cond.Wait)
 *   go_sema_woken     each RET of those: the wait is over
 *   go_sema_wake      the first instruction of the runtime's semaphore
 *                     release and of notifyListNotifyOne/All: who hands the
 *                     RWMutex on, who signals the Cond
 *
 * Never a uretprobe: the Go runtime moves goroutine stacks, and a return
 * address replaced by the uprobe trampoline would be copied to the new
 * stack and confuse the runtime's own unwinder (a fatal error in the
 * traceback). The RET is found in the function's code instead.
 *
 * Go's register ABI (ABIInternal, Go 1.17 onwards on amd64): the first
 * argument is in RAX (the *Mutex receiver), and R14 holds the current
 * goroutine (g) in Go code. A goroutine may move to another thread while
 * it waits, so a wait is keyed by (process, g), not by thread.
 *
 * One go_mutex_wait_event (bpf/go_mutex.h) per contended acquisition:
 * request = entry, acquired = the RET, releaser = the thread (and
 * goroutine) that last ran unlockSlow on that mutex since the wait began
 * (the holder that handed it on). One go_mutex_unlock_event per slow
 * unlock. Goroutine ids are read from the g at the offset the attach
 * cookie gives (the binary's runtime.g layout).
 */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/event_output.bpf.h"
#include "bpf/go_mutex.h"
#include "bpf/locks.h"
#include "bpf/stack.bpf.h"
#include "bpf/target_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct goroutine_key {
  __u32 tgid;
  __u32 pad;
  __u64 g;
};

struct go_wait {
  __u64 request_ns;
  __u64 mutex;
  __u64 goid;
};

/* A wait on a semaphore or notify list: `word` is what its releaser or
 * signaller names (the semaphore, the list), `object` the RWMutex or Cond. */
struct go_sema_wait {
  __u64 request_ns;
  __u64 word;
  __u64 object;
  __u64 goid;
  __u32 lock_kind;
  __u32 pad;
};

struct mutex_key {
  __u32 tgid;
  __u32 pad;
  __u64 mutex;
};

struct go_release {
  __u64 time_ns;
  __u64 goid;
  __u32 tid;
  __u32 pad;
};

/* Waits in progress. LRU: a goroutine that never reaches the RET (its
 * process exited, a lockSlow entered twice after a stack growth) must not
 * keep its slot. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, struct goroutine_key);
  __type(value, struct go_wait);
} go_waits SEC(".maps");

/* Slow unlocks in progress (unlockSlow's entry, until its RET); a starving
 * mutex's unlock yields the processor inside, so keyed by goroutine too. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, struct goroutine_key);
  __type(value, struct go_wait);
} go_unlocks SEC(".maps");

/* Semaphore and notify-list waits in progress, apart from lockSlow's (whose
 * own semaphore wait runs inside it on the same goroutine). */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, struct goroutine_key);
  __type(value, struct go_sema_wait);
} go_sema_waits SEC(".maps");

/* The probed functions of each binary, by attach cookie. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, MAX_GO_WAIT_SITES);
  __type(key, __u32);
  __type(value, struct go_wait_site);
} go_sites SEC(".maps");

/* The last slow unlock of each mutex, and the last release or signal of
 * each semaphore and notify list: the releaser of its waiters. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, struct mutex_key);
  __type(value, struct go_release);
} go_releases SEC(".maps");

/* The current goroutine's id: g->goid at `offset`; 0 = unknown. */
static __always_inline __u64 goid_at(struct pt_regs* ctx, __u64 offset) {
  if (offset == GO_NO_GOID) return 0;
  __u64 goid = 0;
  if (bpf_probe_read_user(&goid, sizeof(goid), (const void*)(ctx->r14 + offset)) != 0) return 0;
  return goid;
}

/* The sync.Mutex probes' cookie is the goid offset itself. */
static __always_inline __u64 current_goid(struct pt_regs* ctx) {
  return goid_at(ctx, bpf_get_attach_cookie(ctx));
}

static __always_inline const struct go_wait_site* site_of(struct pt_regs* ctx) {
  __u32 index = (__u32)bpf_get_attach_cookie(ctx);
  return bpf_map_lookup_elem(&go_sites, &index);
}

/* The user stack at a probed function's first instruction or at its RET
 * (the frame is gone there: the caller's return address is at sp and rbp is
 * the caller's frame, as at the first instruction). Go keeps frame
 * pointers, so the walk is frame pointers only. */
static __always_inline void walk_go_stack(struct event_stack* stack) {
  struct pt_regs* regs = NULL;
  __u64 ip;
  struct pending_returns pending;
  bool at_entry;
  stack->user_count = 0;
  if (user_walk_setup(&regs, &ip, &pending, &at_entry) == USER_WALK_OURS && regs)
    stack->user_count = fp_walk(regs, pending, true, stack->frames);
  stack->kernel_count = 0;
  stack->reserved = 0;
}

/* Sends the wait of (tgid, the current g) that ends now at a RET, with the
 * releaser that last named `word` at or after `released_after`. */
static __always_inline void submit_wait(__u64 now, __u32 tgid, __u64 request_ns, __u64 word,
                                        __u64 object, __u64 goid, __u32 lock_kind,
                                        __u64 released_after) {
  struct go_mutex_wait_event* e = scratch_event(0);
  if (!e) return;
  fill_header(&e->header, EVENT_GO_MUTEX_WAIT);
  e->header.time = now;
  e->request_ns = request_ns;
  e->mutex = object;
  e->goid = goid;
  e->releaser_goid = 0;
  e->releaser_tid = 0;
  e->lock_kind = lock_kind;
  struct mutex_key key = {.tgid = tgid, .mutex = word};
  struct go_release* last = bpf_map_lookup_elem(&go_releases, &key);
  /* The releaser's thread may be the waiter's own: the runtime readies the
   * woken goroutine on the releasing thread's processor, and it runs there
   * once the releaser's goroutine parks or ends. */
  if (last && last->time_ns >= released_after) {
    e->releaser_tid = last->tid;
    e->releaser_goid = last->goid;
  }

  walk_go_stack(&e->stack);
  submit_event(
      e, event_size_with_stack(__builtin_offsetof(struct go_mutex_wait_event, stack), &e->stack),
      LOST_LOCKS);
}

SEC("uprobe")
int go_lock_slow(struct pt_regs* ctx) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  if (!is_target(tgid)) return 0;
  struct goroutine_key key = {.tgid = tgid, .g = ctx->r14};
  struct go_wait wait = {
      .request_ns = bpf_ktime_get_ns(), .mutex = ctx->ax, .goid = current_goid(ctx)};
  if (bpf_map_update_elem(&go_waits, &key, &wait, BPF_ANY) != 0) count_drop(LOST_LOCKS);
  return 0;
}

SEC("uprobe")
int go_lock_acquired(struct pt_regs* ctx) {
  __u64 now = bpf_ktime_get_ns();
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  struct goroutine_key key = {.tgid = tgid, .g = ctx->r14};
  struct go_wait* found = bpf_map_lookup_elem(&go_waits, &key);
  if (!found) return 0; /* entered before recording started */
  struct go_wait wait = *found;
  bpf_map_delete_elem(&go_waits, &key);
  /* A lockSlow that only spun took the mutex with no slow unlock: an
   * earlier one released someone else. */
  submit_wait(now, tgid, wait.request_ns, wait.mutex, wait.mutex, wait.goid, LOCK_KIND_MUTEX,
              wait.request_ns);
  return 0;
}

SEC("uprobe")
int go_unlock_slow(struct pt_regs* ctx) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  if (!is_target(tgid)) return 0;
  struct mutex_key key = {.tgid = tgid, .mutex = ctx->ax};
  struct go_release release = {
      .time_ns = bpf_ktime_get_ns(), .goid = current_goid(ctx), .tid = (__u32)id};
  bpf_map_update_elem(&go_releases, &key, &release, BPF_ANY);

  /* Every unlock while a goroutine sleeps on the mutex comes here (the
   * waiter count keeps the state word from reaching 0), so these are the
   * ends of the holds others waited for; sent at the RET, which bounds when
   * this goroutine can take the mutex again. */
  struct goroutine_key g = {.tgid = tgid, .g = ctx->r14};
  struct go_wait unlock = {.request_ns = release.time_ns, .mutex = key.mutex, .goid = release.goid};
  if (bpf_map_update_elem(&go_unlocks, &g, &unlock, BPF_ANY) != 0) count_drop(LOST_LOCKS);
  return 0;
}

SEC("uprobe")
int go_unlock_done(struct pt_regs* ctx) {
  __u64 now = bpf_ktime_get_ns();
  struct goroutine_key g = {.tgid = bpf_get_current_pid_tgid() >> 32, .g = ctx->r14};
  struct go_wait* found = bpf_map_lookup_elem(&go_unlocks, &g);
  if (!found) return 0; /* entered before recording started */
  struct go_wait unlock = *found;
  bpf_map_delete_elem(&go_unlocks, &g);
  struct go_mutex_unlock_event* e = scratch_event(0);
  if (!e) return 0;
  fill_header(&e->header, EVENT_GO_MUTEX_UNLOCK);
  e->header.time = now;
  e->release_ns = unlock.request_ns;
  e->mutex = unlock.mutex;
  e->goid = unlock.goid;
  walk_go_stack(&e->stack);
  submit_event(
      e, event_size_with_stack(__builtin_offsetof(struct go_mutex_unlock_event, stack), &e->stack),
      LOST_LOCKS);
  return 0;
}

/* The kind and object of a wait that enters the probed function now, or
 * false for one another probe reports (lockSlow's own semaphore wait). */
static __always_inline bool classify_sema_wait(struct pt_regs* ctx, const struct go_wait_site* site,
                                               struct go_sema_wait* wait) {
  __u32 role = bpf_get_attach_cookie(ctx) >> 32;
  if (role == GO_WAIT_BY_CALLER) {
    /* Go's register ABI: RCX is the third argument, skipframes: 1 from
     * lockSlow, 0 from RWMutex. The return address is at sp at entry. */
    if (ctx->cx != 0) return false;
    __u64 ret = 0;
    if (bpf_probe_read_user(&ret, sizeof(ret), (const void*)ctx->sp) != 0) return false;
    __s64 from_lock = (__s64)(ret - ctx->ip) - site->writer_caller;
    role = from_lock >= 0 && (__u64)from_lock < site->writer_caller_size ? GO_WAIT_WRITE
                                                                         : GO_WAIT_READ;
  }
  switch (role) {
    case GO_WAIT_READ:
      wait->lock_kind = LOCK_KIND_RWLOCK_READ;
      wait->object = wait->word - site->read_offset;
      return true;
    case GO_WAIT_WRITE:
      wait->lock_kind = LOCK_KIND_RWLOCK_WRITE;
      wait->object = wait->word - site->write_offset;
      return true;
    case GO_WAIT_COND:
      wait->lock_kind = LOCK_KIND_CONDVAR;
      wait->object = wait->word - site->cond_offset;
      return true;
  }
  return false;
}

SEC("uprobe")
int go_sema_wait(struct pt_regs* ctx) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  if (!is_target(tgid)) return 0;
  const struct go_wait_site* site = site_of(ctx);
  if (!site) return 0;
  struct go_sema_wait wait = {.request_ns = bpf_ktime_get_ns(), .word = ctx->ax};
  if (!classify_sema_wait(ctx, site, &wait)) return 0;
  wait.goid = goid_at(ctx, site->goid_offset);
  struct goroutine_key key = {.tgid = tgid, .g = ctx->r14};
  if (bpf_map_update_elem(&go_sema_waits, &key, &wait, BPF_ANY) != 0) count_drop(LOST_LOCKS);
  return 0;
}

SEC("uprobe")
int go_sema_woken(struct pt_regs* ctx) {
  __u64 now = bpf_ktime_get_ns();
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  struct goroutine_key key = {.tgid = tgid, .g = ctx->r14};
  struct go_sema_wait* found = bpf_map_lookup_elem(&go_sema_waits, &key);
  if (!found) return 0; /* lockSlow's, or entered before recording started */
  struct go_sema_wait wait = *found;
  bpf_map_delete_elem(&go_sema_waits, &key);
  /* A semaphore keeps a release no one waited for yet, and a notify list a
   * signal that came before the waiter parked: the last one before the
   * wait ended is what ended it, even when it came before the entry. */
  submit_wait(now, tgid, wait.request_ns, wait.word, wait.object, wait.goid, wait.lock_kind, 0);
  return 0;
}

SEC("uprobe")
int go_sema_wake(struct pt_regs* ctx) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  if (!is_target(tgid)) return 0;
  const struct go_wait_site* site = site_of(ctx);
  if (!site) return 0;
  struct mutex_key key = {.tgid = tgid, .mutex = ctx->ax};
  struct go_release release = {
      .time_ns = bpf_ktime_get_ns(), .goid = goid_at(ctx, site->goid_offset), .tid = (__u32)id};
  bpf_map_update_elem(&go_releases, &key, &release, BPF_ANY);
  return 0;
}
