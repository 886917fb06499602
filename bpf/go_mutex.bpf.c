// SPDX-License-Identifier: GPL-2.0
/* Go sync.Mutex contention through uprobes on the slow paths only
 * (recorder/sources/go_mutex_source.cc finds the addresses in the Go binary):
 *
 *   go_lock_slow      sync.(*Mutex).lockSlow, first instruction: the fast
 *                     path's compare-and-swap failed; the wait starts
 *   go_lock_acquired  the RET of lockSlow: the goroutine holds the mutex
 *   go_unlock_slow    sync.(*Mutex).unlockSlow, first instruction: an unlock
 *                     that found waiters; it hands the mutex on
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
 * (the holder that handed it on). Goroutine ids are read from the g at the
 * offset the attach cookie gives (the binary's runtime.g layout).
 */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/event_output.bpf.h"
#include "bpf/go_mutex.h"
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

/* The last slow unlock of each mutex: the releaser of its waiters. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, struct mutex_key);
  __type(value, struct go_release);
} go_releases SEC(".maps");

/* The current goroutine's id: g->goid at the cookie's offset; 0 = unknown. */
static __always_inline __u64 current_goid(struct pt_regs* ctx) {
  __u64 offset = bpf_get_attach_cookie(ctx);
  if (offset == GO_NO_GOID) return 0;
  __u64 goid = 0;
  if (bpf_probe_read_user(&goid, sizeof(goid), (const void*)(ctx->r14 + offset)) != 0) return 0;
  return goid;
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

  struct go_mutex_wait_event* e = scratch_event(0);
  if (!e) return 0;
  fill_header(&e->header, EVENT_GO_MUTEX_WAIT);
  e->header.time = now;
  e->request_ns = wait.request_ns;
  e->mutex = wait.mutex;
  e->goid = wait.goid;
  e->releaser_goid = 0;
  e->releaser_tid = 0;
  e->reserved = 0;
  struct mutex_key mutex = {.tgid = tgid, .mutex = wait.mutex};
  struct go_release* last = bpf_map_lookup_elem(&go_releases, &mutex);
  /* The releaser's thread may be the waiter's own: the runtime readies the
   * woken goroutine on the releasing thread's processor, and it runs there
   * once the releaser's goroutine parks or ends. */
  if (last && last->time_ns >= wait.request_ns) {
    e->releaser_tid = last->tid;
    e->releaser_goid = last->goid;
  }

  /* At the RET the frame is gone: the caller's return address is at sp and
   * rbp is the caller's frame, as at a function's first instruction. Go
   * keeps frame pointers, so the walk is frame pointers only. */
  struct pt_regs* regs = NULL;
  __u64 ip;
  struct pending_returns pending;
  bool at_entry;
  e->stack.user_count = 0;
  if (user_walk_setup(&regs, &ip, &pending, &at_entry) == USER_WALK_OURS && regs)
    e->stack.user_count = fp_walk(regs, pending, true, e->stack.frames);
  e->stack.kernel_count = 0;
  e->stack.reserved = 0;
  submit_event(
      e, event_size_with_stack(__builtin_offsetof(struct go_mutex_wait_event, stack), &e->stack),
      LOST_LOCKS);
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
  return 0;
}
