// Test-only (tests/recorder/user_walk_check_test.cc): runs the recorder's
// frame-pointer user-stack walker (walk_user_stack_fp, bpf/stack.bpf.h) and the kernel's
// (bpf_get_stack) on the same events, in the same program run, and counts
// the walks whose frames differ. Events: futex syscall entries (a
// tracepoint), blocking and preempting switches (tp_btf) and cpu-clock
// samples (perf_event) of every process with a user stack, and the entry
// and return of a probed function. The uretprobe (attached by the test)
// keeps probed calls pending, so walks inside them meet the uretprobe
// trampoline where the caller's return address was.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/events.h"
#include "bpf/stack.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 checked = 0;
__u64 differ = 0;
__u64 deep = 0;    /* walks of more than 3 frames */
__u64 pending = 0; /* walks made while a uretprobe of the thread was pending */
/* Time in each walker for the test's report, [0] for walks of at most 3
 * frames, [1] for deeper ones; the two run in turns first and second. */
__u64 ours_ns[2] = {};
__u64 kernels_ns[2] = {};
__u64 walks[2] = {};

struct walk_pair {
  __u64 ours[MAX_STACK_DEPTH];
  __u64 kernels[MAX_STACK_DEPTH];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct walk_pair);
} pairs SEC(".maps");

static __always_inline void compare_walks(void* ctx) {
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  if (tgid == 0) return;
  __u32 zero = 0;
  struct walk_pair* pair = bpf_map_lookup_elem(&pairs, &zero);
  if (!pair) return;
  bool ours_first = checked & 1;
  __u32 ours = 0, kernels = 0;
  __u64 start = bpf_ktime_get_ns();
  if (ours_first)
    ours = walk_user_stack_fp(ctx, pair->ours);
  else
    kernels = kernel_walk_user_stack(ctx, pair->kernels);
  __u64 middle = bpf_ktime_get_ns();
  if (ours_first)
    kernels = kernel_walk_user_stack(ctx, pair->kernels);
  else
    ours = walk_user_stack_fp(ctx, pair->ours);
  __u64 end = bpf_ktime_get_ns();
  if (kernels == 0) return; /* no user stack here (kernel thread) */

  __u32 depth = kernels > 3 ? 1 : 0;
  __sync_fetch_and_add(&walks[depth], 1);
  __sync_fetch_and_add(&ours_ns[depth], ours_first ? middle - start : end - middle);
  __sync_fetch_and_add(&kernels_ns[depth], ours_first ? end - middle : middle - start);
  /* The kernel's walker also stores a return address below 4096 where a
   * chain ends; ours ends the walk before it. */
  bool same = true;
  __u32 i = 0;
  for (; i < MAX_STACK_DEPTH; i++) {
    if (i >= kernels || (i > 0 && pair->kernels[i] < LOWEST_FRAME_ADDRESS)) break;
    if (i >= ours || pair->ours[i] != pair->kernels[i]) {
      same = false;
      break;
    }
  }
  if (i != ours) same = false;
  __sync_fetch_and_add(&checked, 1);
  struct uprobe_task* utask = bpf_get_current_task_btf()->utask;
  if (utask && utask->return_instances) __sync_fetch_and_add(&pending, 1);
  if (!same) __sync_fetch_and_add(&differ, 1);
}

SEC("tracepoint/syscalls/sys_enter_futex")
int futex_entry(void* ctx) {
  compare_walks(ctx);
  return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_out, bool preempt, struct task_struct* prev) {
  compare_walks(ctx);
  return 0;
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data* ctx) {
  compare_walks(ctx);
  return 0;
}

/* In uprobe context too: locks.bpf.c takes its acquire stacks there. */
SEC("uprobe")
int acquire_entry(void* ctx) {
  compare_walks(ctx);
  return 0;
}

SEC("uretprobe")
int acquire_return(void* ctx) {
  compare_walks(ctx);
  return 0;
}
