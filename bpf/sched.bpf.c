// Scheduler and process life of target threads.
//
// sched_switch: prev/next, prev state (0 = preempted) and prev's off-CPU
// stack (in this tracepoint `current` is still prev, so bpf_get_stack sees
// prev's kernel and user stacks). sched_waking and sched_wakeup_new: waker =
// current, with its stack. sched_waking rather than sched_wakeup because it
// always runs in the waker's context: sched_wakeup of a remote wake-up can
// run later on the wakee's cpu (the wake list's IPI), in whatever task runs
// there. It runs before the scheduler picks the wakee's cpu, so target_cpu
// is the cpu the wakee last ran on (where it is usually queued again); it
// also runs under the wakee's pi_lock rather than a runqueue lock.
// fork/exec/exit/rename feed the process tracker, and fork adds
// children of target processes to `targets` so `-- CMD` follows the tree.
//
// Every hook has a tp_btf and a raw_tp variant; the recorder autoloads the
// tp_btf ones when the kernel has BTF-enabled tracepoints, else raw_tp.
// Nothing is kept per CPU: threads migrate, so state is per event or per
// thread (the user stack of a futex wait, bpf/wait_stack.bpf.h, walked once
// by the lock program and reused by the blocking switch).
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/event_output.bpf.h"
#include "bpf/events.h"
#include "bpf/stack.bpf.h"
#include "bpf/target_filter.bpf.h"
#include "bpf/wait_stack.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* enum sched_stack_mode; the recorder sets OFF when stacks are off (-g none). */
const volatile __u32 sched_stacks = SCHED_STACKS_BLOCKED;

// Interrupt-context wake-ups can nest inside other hooks of this object.
enum { SLOT_SWITCH = 0, SLOT_WAKEUP = 1 };

static __always_inline int on_switch(void* ctx, bool preempt, struct task_struct* prev,
                                     struct task_struct* next, unsigned int prev_state) {
  bool prev_is_target = is_target_task(prev);
  if (!prev_is_target && !is_target_task(next)) return 0;

  struct sched_switch_event* e = scratch_event(SLOT_SWITCH);
  if (!e) return 0;
  e->header.type = EVENT_SCHED_SWITCH;
  e->header.cpu = bpf_get_smp_processor_id();
  e->header.time = bpf_ktime_get_ns();
  e->header.pid = BPF_CORE_READ(prev, tgid);
  e->header.tid = BPF_CORE_READ(prev, pid);
  e->prev_state = preempt ? 0 : prev_state;
  e->next_pid = BPF_CORE_READ(next, tgid);
  e->next_tid = BPF_CORE_READ(next, pid);
  // A preempted thread's kernel stack is always the interrupt-return path, and
  // this program runs with interrupts off, stretching every switch it sees: a
  // preemption keeps at most the user stack (where the thread was running),
  // and by default none (CPU samples already show where threads run).
  bool preempted = e->prev_state == 0;
  if (sched_stacks == SCHED_STACKS_OFF || !prev_is_target || e->header.pid == 0 ||
      (preempted && sched_stacks != SCHED_STACKS_ALL))
    clear_stack(&e->stack);
  else
    capture_stacks_in_wait(ctx, &e->stack, e->header.tid, !preempted);
  submit_event(
      e, event_size_with_stack(__builtin_offsetof(struct sched_switch_event, stack), &e->stack),
      LOST_SCHED);
  return 0;
}

static __always_inline int on_wakeup(void* ctx, struct task_struct* wakee, bool is_new) {
  __u32 waker_tgid = bpf_get_current_pid_tgid() >> 32;
  bool waker_is_target = is_target(waker_tgid);
  if (!waker_is_target && !is_target_task(wakee)) return 0;

  struct wakeup_event* e = scratch_event(SLOT_WAKEUP);
  if (!e) return 0;
  fill_header(&e->header, EVENT_WAKEUP);
  e->wakee_pid = BPF_CORE_READ(wakee, tgid);
  e->wakee_tid = BPF_CORE_READ(wakee, pid);
  e->target_cpu = BPF_CORE_READ(wakee, wake_cpu);
  e->is_new_task = is_new;
  // The waker's kernel part is the wake-up path (futex_wake, try_to_wake_up);
  // its user part says which code released the waiter. A waker outside the
  // targets gets no stack: it is mostly a bystander (a wake-up from a timer
  // or I/O interrupt runs in whatever task it interrupted), and its stack
  // would cost a user-stack walk plus the recorder reading that
  // process's maps and symbol tables.
  if (sched_stacks == SCHED_STACKS_OFF || waker_tgid == 0 || !waker_is_target)
    clear_stack(&e->stack);
  else if (sched_stacks == SCHED_STACKS_ALL)
    capture_stacks(ctx, &e->stack);
  else
    capture_user_stack(ctx, &e->stack);
  submit_event(e, event_size_with_stack(__builtin_offsetof(struct wakeup_event, stack), &e->stack),
               LOST_SCHED);
  return 0;
}

static __always_inline void output_process_event(struct process_event* e) {
  e->header.type = EVENT_PROCESS;
  e->header.cpu = bpf_get_smp_processor_id();
  e->header.time = bpf_ktime_get_ns();
  submit_event(e, sizeof(*e), LOST_PROCESS);
}

static __always_inline int on_fork(struct task_struct* parent, struct task_struct* child) {
  __u32 parent_tgid = BPF_CORE_READ(parent, tgid);
  __u32 child_tgid = BPF_CORE_READ(child, tgid);
  if (!is_target(parent_tgid)) return 0;
  if (filter_by_pid && child_tgid != parent_tgid) {
    __u8 one = 1;
    bpf_map_update_elem(&targets, &child_tgid, &one, BPF_ANY);
  }
  struct process_event e = {};
  e.header.pid = parent_tgid;
  e.header.tid = BPF_CORE_READ(parent, pid);
  e.kind = PROCESS_FORK;
  e.peer_pid = child_tgid;
  e.peer_tid = BPF_CORE_READ(child, pid);
  BPF_CORE_READ_STR_INTO(&e.comm, child, comm);
  output_process_event(&e);
  return 0;
}

static __always_inline int on_exec(struct task_struct* task) {
  __u32 tgid = BPF_CORE_READ(task, tgid);
  if (!is_target(tgid)) return 0;
  struct process_event e = {};
  e.header.pid = tgid;
  e.header.tid = BPF_CORE_READ(task, pid);
  e.kind = PROCESS_EXEC;
  BPF_CORE_READ_STR_INTO(&e.comm, task, comm);
  output_process_event(&e);
  return 0;
}

// Exit status as a shell reports it: the code, or 128 + the killing signal.
static __always_inline __u32 exit_status(int exit_code) {
  if ((exit_code & 0x7f) == 0) return (exit_code >> 8) & 0xff;
  return 128 + (exit_code & 0x7f);
}

static __always_inline int on_exit(struct task_struct* task) {
  __u32 tgid = BPF_CORE_READ(task, tgid);
  if (!is_target(tgid)) return 0;
  struct process_event e = {};
  e.header.pid = tgid;
  e.header.tid = BPF_CORE_READ(task, pid);
  e.kind = PROCESS_EXIT;
  drop_wait_stack(e.header.tid);
  // signal->live reached 0 before this tracepoint when the last thread exits.
  e.is_process_exit = BPF_CORE_READ(task, signal, live.counter) == 0;
  if (e.is_process_exit) e.peer_pid = exit_status(BPF_CORE_READ(task, exit_code));
  output_process_event(&e);
  return 0;
}

static __always_inline int on_rename(struct task_struct* task, const char* comm) {
  __u32 tgid = BPF_CORE_READ(task, tgid);
  if (!is_target(tgid)) return 0;
  struct process_event e = {};
  e.header.pid = tgid;
  e.header.tid = BPF_CORE_READ(task, pid);
  e.kind = PROCESS_COMM;
  bpf_probe_read_kernel_str(e.comm, sizeof(e.comm), comm);
  output_process_event(&e);
  return 0;
}

// ---- tp_btf variants ---------------------------------------------------------

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_sched_switch, bool preempt, struct task_struct* prev, struct task_struct* next,
             unsigned int prev_state) {
  return on_switch(ctx, preempt, prev, next, prev_state);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(btf_sched_waking, struct task_struct* p) {
  return on_wakeup(ctx, p, false);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(btf_sched_wakeup_new, struct task_struct* p) {
  return on_wakeup(ctx, p, true);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(btf_sched_process_fork, struct task_struct* parent, struct task_struct* child) {
  return on_fork(parent, child);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(btf_sched_process_exec, struct task_struct* p) {
  return on_exec(p);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(btf_sched_process_exit, struct task_struct* p) {
  return on_exit(p);
}

SEC("tp_btf/task_rename")
int BPF_PROG(btf_task_rename, struct task_struct* task, const char* comm) {
  return on_rename(task, comm);
}

// ---- raw_tp variants (kernels without BTF-enabled tracepoints) ---------------

SEC("raw_tp/sched_switch")
int BPF_PROG(raw_sched_switch, bool preempt, struct task_struct* prev, struct task_struct* next,
             unsigned int prev_state) {
  return on_switch(ctx, preempt, prev, next, prev_state);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(raw_sched_waking, struct task_struct* p) {
  return on_wakeup(ctx, p, false);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(raw_sched_wakeup_new, struct task_struct* p) {
  return on_wakeup(ctx, p, true);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(raw_sched_process_fork, struct task_struct* parent, struct task_struct* child) {
  return on_fork(parent, child);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(raw_sched_process_exec, struct task_struct* p) {
  return on_exec(p);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(raw_sched_process_exit, struct task_struct* p) {
  return on_exit(p);
}

SEC("raw_tp/task_rename")
int BPF_PROG(raw_task_rename, struct task_struct* task, const char* comm) {
  return on_rename(task, comm);
}
