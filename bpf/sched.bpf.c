// Scheduler and process life of target threads, and contended futex waits.
//
// sched_switch: prev/next, prev state (0 = preempted) and prev's off-CPU
// stack (in this tracepoint `current` is still prev, so the stack walks see
// prev's kernel and user stacks). When prev blocks inside a futex wait, the
// switch also carries the wait's facts read from prev's saved registers and
// memory (bpf/futex_wait.bpf.h): that is how contended locks and other
// futex waits are recorded, with no syscall probe. sched_waking and
// sched_wakeup_new: waker = current, with its stack, and whether the waker
// is releasing a futex. sched_waking rather than sched_wakeup because it
// always runs in the waker's context: sched_wakeup of a remote wake-up can
// run later on the wakee's cpu (the wake list's IPI), in whatever task runs
// there. It runs before the scheduler picks the wakee's cpu, so target_cpu
// is the cpu the wakee last ran on (where it is usually queued again); it
// also runs under the wakee's pi_lock rather than a runqueue lock.
// fork/exec/exit/rename feed the process tracker, and fork adds
// children of target processes to `targets` so `-- CMD` follows the tree.
//
// Switch-out and waker user stacks are walked once per place and reused
// (bpf/wait_stack.bpf.h), and so are switch-out kernel stacks
// (bpf/kernel_wait_stack.bpf.h). With --sched-min-block on the tp_btf
// variants, short blocks are decided here (bpf/kernel_blocks.bpf.h): a
// block's rows wait in its thread's storage until its switch-in says whether
// it was long, a short one is counted instead, and its wake-up is held
// until then too; a waker's stack is walked only where a row sent can keep
// it. The raw_tp variants send every switch and wake-up, and the recorder
// drops short blocks' rows (recorder/sources/short_blocks.h).
//
// With --no-sched and a lock mode, only what the futex waits need is sent:
// the blocking switch of a wait, the wake-up of a thread in one and its next
// switch-in (`futex_waiters` says which threads are waiting). The recorder
// joins the three into one lock row (recorder/sources/sched_source.cc).
//
// Every hook has a tp_btf and a raw_tp variant; the recorder autoloads the
// tp_btf ones when the kernel has BTF-enabled tracepoints, else raw_tp.
// Nothing is kept per CPU: threads migrate, so state is per event or per
// thread. `sweep_blocks`, a task iterator the recorder runs at the end,
// sends the blocks still open then.
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/context.bpf.h"
#include "bpf/event_output.bpf.h"
#include "bpf/events.h"
#include "bpf/futex_wait.bpf.h"
#include "bpf/goroutine.bpf.h"
#include "bpf/kernel_blocks.bpf.h"
#include "bpf/kernel_wait_stack.bpf.h"
#include "bpf/lock_calls.bpf.h"
#include "bpf/stack.bpf.h"
#include "bpf/stage_clock.bpf.h"
#include "bpf/target_cache.bpf.h"
#include "bpf/target_filter.bpf.h"
#include "bpf/wait_stack.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* enum sched_stack_mode; the recorder sets OFF when stacks are off (-g none). */
const volatile __u32 sched_stacks = SCHED_STACKS_BLOCKED;
/* Switch and wake-up rows (off with --no-sched: only futex waits are sent). */
const volatile bool emit_sched_rows = true;
/* A lock mode is on: read the futex wait of every blocking switch. */
const volatile bool futex_waits = false;
/* Lock calls are probed (--locks all, --lock-probe): look waits up in pending_calls. */
const volatile bool lock_calls_probed = false;

/* Threads in a futex wait, kept only when switch rows are not all sent. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_THREADS);
  __type(key, __u32);
  __type(value, __u8);
} futex_waiters SEC(".maps");

/* Go targets: the goroutine each thread ran when it last left its CPU. A
 * thread's current g changes only while that thread runs (the scheduler's
 * own code on it), so the goroutine it resumes at a switch-in is the one it
 * left at its switch-out; next's memory cannot be read here (prev's address
 * space is current), its last switch-out's reading can. One entry per
 * thread, dropped at its exit; the recorder sizes the map to 1 without Go
 * targets. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_THREADS);
  __type(key, __u32);
  __type(value, __u64);
} go_thread_goids SEC(".maps");

// Interrupt-context wake-ups can nest inside other hooks of this object, and
// the sweep (a task iterator, preemptible) inside none but may be preempted.
enum { SLOT_SWITCH = 0, SLOT_WAKEUP = 1, SLOT_DECIDED = 2, SLOT_SWEEP = 3 };

/* include/linux/sched.h */
#define TASK_UNINTERRUPTIBLE_STATE 0x2

/* A task's field: a plain load where the tracepoint's pointers are typed
 * (tp_btf: the verifier knows them, the JIT guards the load), else through
 * the read helper (raw_tp), a call per field. `typed` is a constant at each
 * use, so each variant keeps one of the two. */
#define TASK_FIELD(typed, task, field) ((typed) ? (task)->field : BPF_CORE_READ(task, field))
/* Whether a task is a target: remembered per task where its pointer is typed. */
#define IS_TARGET_TASK(typed, task, tgid) \
  ((typed) ? is_target_task_cached(task, tgid) : is_target_task_with(task, tgid))

/* The goroutines of a switch's two sides (0: none, not Go, or not known). */
static __always_inline void switch_goids(bool prev_is_target, bool next_is_target, __u32 prev_tgid,
                                         __u32 prev_tid, __u32 next_tid, __u64* prev_goid,
                                         __u64* next_goid) {
  *prev_goid = 0;
  *next_goid = 0;
  if (!go_targets) return;
  const struct go_process* go = prev_is_target ? go_process_of(prev_tgid) : 0;
  if (go) {
    __u64 goid = current_goid_in(go);
    *prev_goid = goid;
    __u64* left = bpf_map_lookup_elem(&go_thread_goids, &prev_tid);
    if (left)
      *left = goid;
    else
      bpf_map_update_elem(&go_thread_goids, &prev_tid, &goid, BPF_NOEXIST);
  }
  if (next_is_target) {
    const __u64* resumed = bpf_map_lookup_elem(&go_thread_goids, &next_tid);
    if (resumed) *next_goid = *resumed;
  }
}

/* prev's user stack after `kernel_count` kernel frames, as a call of its
 * own: one copy for both ways blocks are decided, and the walk's frame is
 * not on the kernel walk's call chain (each takes much of the 512 bytes the
 * calls may use in all). */
static __noinline __u32 switch_user_stack(void* ctx, struct event_stack* stack,
                                          __u32 kernel_count) {
  kernel_count &= MAX_STACK_DEPTH;
  return walk_wait_stack(ctx, &stack->frames[kernel_count], SLOT_SWITCH);
}

/* Which stacks a switch gets. The kernel stack is walked only where it says
 * what the user stack cannot: an uninterruptible block (disk I/O, a page
 * cache fault, a kernel lock). An interruptible one waits for what the
 * program asked for in a syscall (a futex, a socket, epoll, a pipe, a
 * sleep), which its user stack names, and a futex wait's row says it is a
 * futex wait; a preemption's kernel stack is always the interrupt-return
 * path. A kernel walk is most of this program's cost where it is not reused,
 * and the program runs with interrupts off, stretching the switch it records
 * (--sched-stacks all walks it for every block). */
static __always_inline void capture_switch_stack(void* ctx, struct event_stack* stack,
                                                 bool preempted, unsigned int prev_state) {
  bool kernel_stack = !preempted && (sched_stacks == SCHED_STACKS_ALL ||
                                     (prev_state & TASK_UNINTERRUPTIBLE_STATE) != 0);
  /* Masked, not compared: the verifier knows nothing of a global function's
   * result, and a compare the compiler makes on a zero-extended copy leaves
   * the register it then uses unbounded. The count is at most
   * MAX_STACK_DEPTH, all ones, so the mask keeps it. */
  _Static_assert((MAX_STACK_DEPTH & (MAX_STACK_DEPTH + 1)) == 0, "MAX_STACK_DEPTH is 2^k - 1");
  __u32 kernel_count = kernel_stack ? (__u32)switch_kernel_stack(ctx, stack) & MAX_STACK_DEPTH : 0;
  stage_clock_end(STAGE_KERNEL_STACK);
  stack->user_count = switch_user_stack(ctx, stack, kernel_count);
  stack->kernel_count = kernel_count;
  stack->reserved = 0;
}

/* A waker's user stack, and with --sched-stacks all its kernel part too
 * (the wake-up path). One user walk for either, so the verifier checks one
 * inlined copy and the program's frame has room for the unwinder's calls. */
static __always_inline void capture_waker_stack(void* ctx, struct event_stack* stack) {
  stage_clock_start();
  __u32 kernel_count = sched_stacks == SCHED_STACKS_ALL ? walk_kernel_stack(ctx, stack->frames) : 0;
  stack->user_count = walk_wait_stack(ctx, &stack->frames[kernel_count], SLOT_WAKEUP);
  stack->kernel_count = kernel_count;
  stack->reserved = 0;
}

/* A switch with blocks decided here (bpf/kernel_blocks.bpf.h); `e` holds
 * its header, next and goroutines, and the futex wait's facts when prev
 * blocks in one. */
static __always_inline int on_decided_switch(void* ctx, struct futex_switch_event* e,
                                             struct task_struct* next, bool prev_is_target,
                                             bool next_is_target, bool preempted,
                                             unsigned int prev_state, bool in_futex_wait) {
  /* Idle (pid 0) is no target's half, whatever the filter. */
  bool prev_target_half = prev_is_target && e->header.pid != 0;
  bool next_target_half = next_is_target && e->next_pid != 0;
  /* next's half: the end of its block. */
  __u32 in = next_target_half ? decide_switch_in(bpf_task_storage_get(&thread_blocks, next, 0, 0),
                                                 e->next_tid, e->header.time, SLOT_DECIDED)
                              : 0;
  bool next_half_written = (in & SWITCH_IN_HALF_WRITTEN) != 0;
  bool next_ends_wait = (in & SWITCH_IN_ENDS_WAIT) != 0;
  stage_clock_end(STAGE_HEADER);
  /* prev's half: the start of its block, written now or once it is long. */
  bool prev_half_now = true;
  struct event_stack* stack = 0;
  if (prev_target_half) {
    struct thread_block* block = bpf_task_storage_get(&thread_blocks, bpf_get_current_task_btf(), 0,
                                                      BPF_LOCAL_STORAGE_GET_F_CREATE);
    bool wants_stack =
        sched_stacks != SCHED_STACKS_OFF && (!preempted || sched_stacks == SCHED_STACKS_ALL);
    if (block) {
      stack = &block->stack;
      if (wants_stack)
        capture_switch_stack(ctx, stack, preempted, in_futex_wait ? 0 : prev_state);
      else
        clear_stack(stack);
      if (!wants_stack) stage_clock_end(STAGE_NO_STACK);
      block->stack_hash = stack_hash(stack);
      __u32 how =
          (next_target_half ? SWITCH_OUT_NEXT_TARGET : 0) |
          (next_target_half && next_half_written ? SWITCH_OUT_NEXT_WRITTEN : 0) |
          (in_futex_wait ? SWITCH_OUT_FUTEX_WAIT : 0) |
          (in_futex_wait && wait_object_may_have_holder(e->futex.object) ? SWITCH_OUT_HOLDER_WAIT
                                                                         : 0);
      prev_half_now = note_switch_out(block, e, how, SLOT_DECIDED) != 0;
    }
  }
  /* This switch's row, if a target's half in it is written and prev's is
   * decided: a row whose prev waits for its block's end waits with it. */
  bool row = prev_target_half ? prev_half_now : next_target_half && next_half_written;
  if (row || next_ends_wait) {
    struct decided_switch_event* r = scratch_event(SLOT_DECIDED);
    if (r) {
      r->header = e->header;
      r->header.type = EVENT_DECIDED_SWITCH;
      r->prev_state = e->prev_state;
      r->next_pid = e->next_pid;
      r->next_tid = e->next_tid;
      r->elided = DECIDED_CPU_ROWS_BEFORE |
                  (next_target_half && !next_half_written ? DECIDED_NEXT_ELIDED : 0);
      r->flags = (row ? DECIDED_ROW : 0) | (next_ends_wait ? DECIDED_NEXT_ENDS_WAIT : 0);
      r->reserved = 0;
      r->prev_goid = e->prev_goid;
      r->next_goid = e->next_goid;
      __u32 frames = 0;
      if (row && stack)
        frames = copy_stack(&r->stack, stack);
      else
        clear_stack(&r->stack);
      submit_event(
          r, event_size_with_frames(__builtin_offsetof(struct decided_switch_event, stack), frames),
          LOST_SCHED);
    }
  }
  if (in_futex_wait) {
    /* The wait's facts and stack, for its lock row; not a switch row. */
    e->target_flags |= SWITCH_NOT_A_ROW;
    __u32 frames = 0;
    if (stack)
      frames = copy_stack(&e->stack, stack);
    else
      clear_stack(&e->stack);
    submit_event(
        e, event_size_with_frames(__builtin_offsetof(struct futex_switch_event, stack), frames),
        LOST_SCHED);
  }
  stage_clock_end(STAGE_SUBMIT);
  return 0;
}

/* `next_btf` is next as a pointer the local-storage helper accepts, NULL in
 * the raw_tp variants (no wake-up is held there: see on_wakeup); `typed`
 * says which variant this is. */
static __always_inline int on_switch(void* ctx, bool preempt, struct task_struct* prev,
                                     struct task_struct* next, struct task_struct* next_btf,
                                     unsigned int prev_state, bool typed) {
  stage_clock_start();
  __u32 prev_tgid = TASK_FIELD(typed, prev, tgid);
  __u32 next_pid = TASK_FIELD(typed, next, tgid);
  bool prev_is_target = IS_TARGET_TASK(typed, prev, prev_tgid);
  bool next_is_target = IS_TARGET_TASK(typed, next, next_pid);
  if (!prev_is_target && !next_is_target) return 0;
  stage_clock_end(STAGE_TARGET_FILTER);
  __u32 prev_tid = TASK_FIELD(typed, prev, pid);
  __u32 next_tid = TASK_FIELD(typed, next, pid);
  bool preempted = preempt || prev_state == 0;
  if (futex_waits) {
    if (prev_is_target && prev_tgid != 0)
      set_thread_state(prev_tid, state_after_switch_out(preempted ? 0 : prev_state));
    if (next_is_target && next_pid != 0) set_thread_state(next_tid, HOLDER_RUNNING);
  }
  /* prev's context values as it leaves; next resumes with its last ones. */
  if (prev_is_target) read_contexts(prev_tgid, prev_tid);

  struct futex_switch_event* e = scratch_event(SLOT_SWITCH);
  if (!e) return 0;
  bool in_futex_wait = futex_waits && prev_is_target && !preempted && prev_tgid != 0 &&
                       read_futex_wait(&e->futex) != 0;
  /* A wait inside a probed lock call is reported by the call's return. */
  if (in_futex_wait && lock_calls_probed && futex_wait_in_lock_call(prev_tid, e->futex.holder_tid))
    in_futex_wait = false;
  stage_clock_end(STAGE_FUTEX_WAIT);
  if (!emit_sched_rows) {
    /* A lookup first: most switch-ins end no wait, and a delete takes the
     * bucket lock even when there is nothing to delete. */
    bool wait_ends = next_is_target && bpf_map_lookup_elem(&futex_waiters, &next_tid) &&
                     bpf_map_delete_elem(&futex_waiters, &next_tid) == 0;
    if (in_futex_wait) {
      __u8 one = 1;
      bpf_map_update_elem(&futex_waiters, &prev_tid, &one, BPF_ANY);
    } else if (!wait_ends) {
      return 0;
    }
  }

  e->header.type = in_futex_wait ? EVENT_FUTEX_SWITCH : EVENT_SCHED_SWITCH;
  e->header.cpu = bpf_get_smp_processor_id();
  e->header.time = bpf_ktime_get_ns();
  e->header.pid = prev_tgid;
  e->header.tid = prev_tid;
  e->prev_state = preempt ? 0 : prev_state;
  e->target_flags =
      (prev_is_target ? SWITCH_PREV_TARGET : 0) | (next_is_target ? SWITCH_NEXT_TARGET : 0);
  e->next_pid = next_pid;
  e->next_tid = next_tid;
  switch_goids(prev_is_target, next_is_target, prev_tgid, prev_tid, e->next_tid, &e->prev_goid,
               &e->next_goid);
  if (typed && kernel_decides_blocks && emit_sched_rows)
    return on_decided_switch(ctx, e, next_btf, prev_is_target, next_is_target, preempted,
                             prev_state, in_futex_wait);
  stage_clock_end(STAGE_HEADER);
  /* struct sched_switch_event is the same up to next_tid; its stack follows. */
  struct event_stack* stack = in_futex_wait ? &e->stack : &((struct sched_switch_event*)e)->stack;
  // A preemption keeps at most the user stack (where the thread was running),
  // and by default none (CPU samples already show where threads run).
  bool wants_stack = sched_stacks != SCHED_STACKS_OFF && prev_is_target && prev_tgid != 0 &&
                     (!preempted || sched_stacks == SCHED_STACKS_ALL) &&
                     (emit_sched_rows || in_futex_wait);
  if (wants_stack)
    capture_switch_stack(ctx, stack, preempted, in_futex_wait ? 0 : prev_state);
  else
    clear_stack(stack);
  if (!wants_stack) stage_clock_end(STAGE_NO_STACK);
  __u64 stack_offset = in_futex_wait ? __builtin_offsetof(struct futex_switch_event, stack)
                                     : __builtin_offsetof(struct sched_switch_event, stack);
  submit_event(e, event_size_with_stack(stack_offset, stack), LOST_SCHED);
  stage_clock_end(STAGE_SUBMIT);
  return 0;
}

/* WAKER_*: whether the waking thread is releasing a futex (a mutex unlock, a
 * sem_post, a condvar signal) or exiting (the kernel wakes a joiner at exit);
 * a wake from an interrupt or a timer is neither. */
static __always_inline __u32 waker_flags(void) {
  struct task_struct* task = bpf_get_current_task_btf();
  __u32 flags = 0;
  if (task->flags & PF_EXITING) flags |= WAKER_EXITING;
  struct pt_regs* regs = (struct pt_regs*)bpf_task_pt_regs(task);
  if (regs && regs->orig_ax == NR_FUTEX && !is_futex_wait_command(regs->si & FUTEX_COMMAND_MASK))
    flags |= WAKER_IN_FUTEX_WAKE;
  return flags;
}

static __always_inline int on_wakeup(void* ctx, struct task_struct* wakee,
                                     struct task_struct* wakee_btf, bool is_new, bool typed) {
  __u32 waker_tgid = bpf_get_current_pid_tgid() >> 32;
  bool waker_is_target =
      typed ? is_target_task_cached(bpf_get_current_task_btf(), waker_tgid) : is_target(waker_tgid);
  __u32 wakee_pid = TASK_FIELD(typed, wakee, tgid);
  bool wakee_is_target = IS_TARGET_TASK(typed, wakee, wakee_pid);
  if (!waker_is_target && !wakee_is_target) return 0;
  /* A lock holder's state, for the waits on its lock (a thread woken while
   * still on its cpu has not left it). */
  if (futex_waits && wakee_is_target && !TASK_FIELD(typed, wakee, on_cpu))
    set_thread_state(TASK_FIELD(typed, wakee, pid), HOLDER_RUNNABLE);
  if (waker_is_target) read_contexts(waker_tgid, (__u32)bpf_get_current_pid_tgid());
  /* With short blocks dropped, the recorder writes a wake-up only with a
   * target's block, and futex wait rows are only about targets' waits. */
  if (min_block_ns != 0 && emit_sched_rows && !wakee_is_target) return 0;
  if (!emit_sched_rows) {
    __u32 wakee_tid = TASK_FIELD(typed, wakee, pid);
    if (!futex_waits || !bpf_map_lookup_elem(&futex_waiters, &wakee_tid)) return 0;
  }

  __u32 flags = waker_flags();
  bool row = true;
  if (typed && kernel_decides_blocks && emit_sched_rows) {
    /* Its row waits for the end of the block; the lock rows may need it
     * now: the end of a futex wait, or one still being entered (a wake-up
     * can run before its wakee's switch-out). */
    int decided = is_new ? DECIDED_WAKEUP_ROW : decide_wakeup(wakee_btf);
    if (decided == DECIDED_WAKEUP_HELD) return 0;
    if (decided == DECIDED_WAKEUP_FOR_WAIT || decided == DECIDED_WAKEUP_NO_BLOCK) {
      if (!futex_waits) return 0;
      row = false;
    }
  }
  struct wakeup_event* e = scratch_event(SLOT_WAKEUP);
  if (!e) return 0;
  fill_header(&e->header, EVENT_WAKEUP);
  e->wakee_pid = wakee_pid;
  e->wakee_tid = TASK_FIELD(typed, wakee, pid);
  e->target_cpu = TASK_FIELD(typed, wakee, wake_cpu);
  e->is_new_task = is_new;
  e->waker_flags = futex_waits ? flags : 0;
  e->target_flags = (wakee_is_target ? WAKEE_TARGET : 0) | (row ? 0 : WAKEUP_NOT_A_ROW);
  // The waker's kernel part is the wake-up path (futex_wake, try_to_wake_up);
  // its user part says which code released the waiter. A waker outside the
  // targets gets no stack: it is mostly a bystander (a wake-up from a timer
  // or I/O interrupt runs in whatever task it interrupted), and its stack
  // would cost a user-stack walk plus the recorder reading that
  // process's maps and symbol tables.
  /* With blocks decided here, a lock row keeps the stack of the waker
   * that released its wait whatever the wait's length. */
  bool stack_needed = !(typed && kernel_decides_blocks && emit_sched_rows) || row ||
                      (flags & (WAKER_IN_FUTEX_WAKE | WAKER_EXITING)) != 0;
  if (sched_stacks == SCHED_STACKS_OFF || waker_tgid == 0 || !waker_is_target || !stack_needed)
    clear_stack(&e->stack);
  else
    capture_waker_stack(ctx, &e->stack);
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
  if (!emit_sched_rows) bpf_map_delete_elem(&futex_waiters, &e.header.tid);
  if (go_targets) bpf_map_delete_elem(&go_thread_goids, &e.header.tid);
  /* This tracepoint runs in the exiting thread's own context. */
  struct task_struct* self = bpf_get_current_task_btf();
  task_memo_release(&wait_stacks, &wait_stack_memo_threads, self);
  task_memo_release(&kernel_wait_stacks, &kernel_stack_memo_threads, self);
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

/* Blocks still open when the recording stops, and every tally, once the
 * recorder has detached the tracepoints (bpf/kernel_blocks.bpf.h): a task
 * iterator, run once by reading it. */
SEC("iter/task")
int sweep_blocks(struct bpf_iter__task* ctx) {
  struct task_struct* task = ctx->task;
  if (!task || !kernel_decides_blocks) return 0;
  struct thread_block* block = bpf_task_storage_get(&thread_blocks, task, 0, 0);
  if (!block) return 0;
  __u32 tid = task->pid;
  if (block->out_pending) {
    block->out_pending = 0;
    send_late_switch_out(block, tid, 1, SLOT_SWEEP);
    kernel_block_count(KERNEL_BLOCKS_SWEPT, 1);
    if (block->wakeup_held) {
      block->wakeup_held = 0;
      send_held_wakeup_row(block, tid, SLOT_SWEEP);
    }
  }
  send_tallies(block, tid, SLOT_SWEEP);
  return 0;
}

// ---- tp_btf variants ---------------------------------------------------------

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_sched_switch, bool preempt, struct task_struct* prev, struct task_struct* next,
             unsigned int prev_state) {
  return on_switch(ctx, preempt, prev, next, next, prev_state, true);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(btf_sched_waking, struct task_struct* p) {
  return on_wakeup(ctx, p, p, false, true);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(btf_sched_wakeup_new, struct task_struct* p) {
  return on_wakeup(ctx, p, p, true, true);
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
  return on_switch(ctx, preempt, prev, next, NULL, prev_state, false);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(raw_sched_waking, struct task_struct* p) {
  return on_wakeup(ctx, p, NULL, false, false);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(raw_sched_wakeup_new, struct task_struct* p) {
  return on_wakeup(ctx, p, NULL, true, false);
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
