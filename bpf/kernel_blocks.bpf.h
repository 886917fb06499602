/* Short blocks decided in the kernel: the scheduler program's rows with
 * --sched-min-block above 0 on kernels with BTF-enabled tracepoints
 * (bpf/sched.bpf.c; what it sends: bpf/kernel_blocks.h).
 *
 * A target thread's block runs from its switch-out to its next switch-in.
 * On a server most blocks last tens of microseconds, and sending each one's
 * switch and wake-up records through the ring, for the recorder to drop,
 * was most of the scheduler program's cost. So the switch-out's row, with
 * its stack, is kept in the thread's local storage until the block ends,
 * and the switch-in decides:
 *   - short (under min_block_ns): no row; the block is counted into one of
 *     the thread's tallies per (state at switch-out, off-CPU stack), sent as
 *     an EVENT_BLOCK_TALLY when its period (SUMMARY_PERIOD_NS) has passed, when the
 *     thread needs its place for another stack, when the thread exits, or
 *     at the end of the recording;
 *   - long: the switch-out's row is sent then (DECIDED_LATE: after rows of
 *     later times; the analyzer orders rows by time), with its wake-up if
 *     one was held.
 * A switch row has two halves, prev's switch-out and next's switch-in. When
 * prev's block waits, the whole row waits with it: next's half, decided at
 * the switch, is kept with prev's block, and the row is sent once prev's is
 * decided, with either half elided (format::switch_elided) that belongs to
 * a short block, or not at all when both do. So every switch has at most
 * one row, as when the recorder decides. Rows a thread's switch-out writes at once, whatever the
 * block's length: its first in the recording (a report knows where it ran before its first counted
 * sleep), its last (TASK_DEAD), and a preemption while a futex wait on a lock is in progress (a
 * holder's preemption is what correlate looks for; with lock calls probed, or Go targets, where the
 * waits do not say who holds a lock, every preemption). A short preemption
 * during which such a wait began is written at its switch-in.
 *
 * Every row sent here says rows of its cpu may have been left out before
 * it (DECIDED_CPU_ROWS_BEFORE): the analyzer then does not take a thread
 * that left a cpu in a counted sleep for a missing switch.
 *
 * Blocks still open when the recording stops are sent by `sweep_blocks`
 * (bpf/sched.bpf.c), which the recorder runs once after detaching the
 * tracepoints, with every tally: nothing else touches a thread's storage
 * then. While recording, a thread's storage is written by its own
 * switch-out (in its context), read and written by its switch-in (on the
 * cpu taking it, before it runs), and its held wake-up by its wakers before
 * that switch-in: never two at once.
 *
 * What sends records is in global functions, which the verifier checks once
 * each, on their own: inlined at each of their callers, with every state the
 * switch program reaches them in, they tripled its verification (the
 * recorder's start-up).
 */
#ifndef INCISE_BPF_KERNEL_BLOCKS_BPF_H
#define INCISE_BPF_KERNEL_BLOCKS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/event_output.bpf.h"
#include "bpf/events.h"
#include "bpf/futex_wait.h"
#include "bpf/stack.bpf.h"
#include "bpf/kernel_blocks.h"

/* --sched-min-block (0: every block is written whole). */
const volatile __u64 min_block_ns = 0;
/* Short blocks are decided here (else the recorder drops their rows). */
const volatile bool kernel_decides_blocks = false;
/* Every preemption is written: lock calls are probed, or Go targets (their
 * waits do not say who holds a lock). */
const volatile bool preemptions_written = false;

/* Futex waits on a word that may have a holder (not a condvar's, a
 * semaphore's or a thread's): in progress, and begun since the recording
 * started. */
__u64 holder_waits_in_progress = 0;
__u64 holder_waits_begun = 0;

/* A wake-up held back: what its record would carry besides the wakee. */
struct held_wakeup {
  __u64 time;
  __u32 cpu;
  __u32 waker_pid;
  __u32 waker_tid;
  __u32 target_cpu;
};

/* Short blocks of one thread with one state and stack, since first_out. */
struct block_tally {
  __u64 stack_hash;
  __u64 first_out; /* 0: a free tally */
  __u64 last_in;
  __u64 total_ns;
  __u64 max_ns;
  __u32 prev_state;
  __u32 count;
  __u32 wakeups;
  __u32 reserved;
};

/* A thread's tallies: sets of BLOCK_TALLY_WAYS, the set chosen by the
 * stack's hash and the state. A PostgreSQL backend blocks at a dozen or two
 * (state, stack) pairs a second: its client's socket, its LWLocks'
 * semaphore from each caller, a commit's flush, preempted. */
#define BLOCK_TALLY_SETS 16 /* a power of two */
#define BLOCK_TALLY_WAYS 4
#define BLOCK_TALLIES (BLOCK_TALLY_SETS * BLOCK_TALLY_WAYS)

/* Each target thread's last block: its switch-out, kept until the block is
 * decided. `since` (bpf_ktime_get_ns of the switch-out) is set at every
 * switch-out, so a zero one is the thread's first. In the task's local
 * storage: found from the task without hashing a shared table or taking its
 * bucket lock, and it goes with the task. */
struct thread_block {
  __u64 since;
  __u8 in_futex_wait;
  __u8 wakeup_held; /* `held` is the wake-up that ended it */
  __u8 out_pending; /* its switch-out's row waits for its length */
  __u8 holder_wait; /* in a futex wait counted in holder_waits_in_progress */
  __u8 next_was_target;
  __u8 next_written; /* next's half of the switch-out's row is written */
  __u8 reserved0[2];
  struct held_wakeup held;
  /* Its switch-out, for the row once the block is long. */
  __u32 pid;
  __u32 out_cpu;
  __u32 prev_state;
  __u32 next_pid;
  __u32 next_tid;
  __u32 reserved;
  __u64 prev_goid;
  __u64 next_goid;
  __u64 waits_begun; /* holder_waits_begun at the switch-out */
  __u64 stack_hash;
  struct block_tally tallies[BLOCK_TALLIES];
  struct event_stack stack; /* its off-CPU stack at the switch-out */
};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct thread_block);
} thread_blocks SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, KERNEL_BLOCK_COUNTS);
  __type(key, __u32);
  __type(value, __u64);
} kernel_block_counts SEC(".maps");

/* include/linux/sched.h */
#define TASK_DEAD_STATE 0x80

static __always_inline void kernel_block_count(__u32 slot, __u64 amount) {
  __u64* count = bpf_map_lookup_elem(&kernel_block_counts, &slot);
  if (count) *count += amount;
}

/* FNV-1a over the stack's frame counts and frames; 0 for no frames. A
 * global function: the verifier checks its loop once, on its own. */
__noinline __u64 stack_hash(const struct event_stack* stack) {
  if (!stack) return 0;
  __u32 frames = (__u32)stack->kernel_count + stack->user_count;
  if (frames == 0) return 0;
  __u64 hash = 0xcbf29ce484222325ull ^ ((__u64)stack->kernel_count << 16 | stack->user_count);
  for (__u32 i = 0; i < 2 * MAX_STACK_DEPTH; ++i) {
    if (i >= frames) break;
    hash = (hash ^ stack->frames[i]) * 0x100000001b3ull;
  }
  return hash | 1;
}

/* Copies `from`'s frames into `to` (room for 2 * MAX_STACK_DEPTH); returns
 * how many, a count the verifier knows the bounds of (the counts read back
 * from a map value it does not). */
static __always_inline __u32 copy_stack(struct event_stack* to, const struct event_stack* from) {
  __u32 frames = (__u32)from->kernel_count + from->user_count;
  if (frames > 2 * MAX_STACK_DEPTH) frames = 2 * MAX_STACK_DEPTH;
  /* Masked after the compiler forgets the bound, so the verifier sees one. */
  barrier_var(frames);
  frames &= 0xff;
  if (frames == 0 || bpf_probe_read_kernel(to->frames, frames * sizeof(__u64), from->frames) != 0) {
    clear_stack(to);
    return 0;
  }
  to->kernel_count = from->kernel_count;
  to->user_count = (__u16)(frames - (from->kernel_count < frames ? from->kernel_count : frames));
  to->reserved = 0;
  return frames;
}

/* Bytes of a record whose stack of `frames` frames starts `stack_offset` bytes in. */
static __always_inline __u64 event_size_with_frames(__u64 stack_offset, __u32 frames) {
  return stack_offset + __builtin_offsetof(struct event_stack, frames) +
         (__u64)(frames & 0xff) * sizeof(__u64);
}

/* A pending block's switch-out row, once the block is decided: long (or
 * still open at the end), or short with next's half written
 * (`prev_written` 0: prev's half elided). `slot`: the scratch record to build
 * it in. */
__noinline int send_late_switch_out(struct thread_block* block, __u32 tid, __u32 prev_written,
                                    __u32 slot) {
  struct decided_switch_event* e = scratch_event(slot);
  if (!block || !e) return 0;
  e->header.type = EVENT_DECIDED_SWITCH;
  e->header.cpu = block->out_cpu;
  e->header.time = block->since;
  e->header.pid = block->pid;
  e->header.tid = tid;
  e->prev_state = block->prev_state;
  e->next_pid = block->next_pid;
  e->next_tid = block->next_tid;
  e->elided = DECIDED_CPU_ROWS_BEFORE | (prev_written ? 0 : DECIDED_PREV_ELIDED) |
              (block->next_was_target && !block->next_written ? DECIDED_NEXT_ELIDED : 0);
  e->flags = DECIDED_ROW | DECIDED_LATE;
  e->reserved = 0;
  e->prev_goid = block->prev_goid;
  e->next_goid = block->next_goid;
  __u32 frames = 0;
  if (prev_written)
    frames = copy_stack(&e->stack, &block->stack);
  else
    clear_stack(&e->stack);
  submit_event(
      e, event_size_with_frames(__builtin_offsetof(struct decided_switch_event, stack), frames),
      LOST_SCHED);
  if (prev_written) kernel_block_count(KERNEL_BLOCKS_LATE_ROWS, 1);
  return 0;
}

/* The wake-up held for `block`'s end, as a row (its block was long). */
__noinline int send_held_wakeup_row(struct thread_block* block, __u32 wakee_tid, __u32 slot) {
  struct wakeup_event* w = scratch_event(slot);
  if (!block || !w) return 0;
  w->header.type = EVENT_WAKEUP;
  w->header.cpu = block->held.cpu;
  w->header.time = block->held.time;
  w->header.pid = block->held.waker_pid;
  w->header.tid = block->held.waker_tid;
  w->wakee_pid = block->pid;
  w->wakee_tid = wakee_tid;
  w->target_cpu = block->held.target_cpu;
  w->is_new_task = 0;
  w->waker_flags = 0;
  w->target_flags = WAKEE_TARGET;
  clear_stack(&w->stack);
  submit_event(w, event_size_with_frames(__builtin_offsetof(struct wakeup_event, stack), 0),
               LOST_SCHED);
  return 0;
}

__noinline int send_tally(struct block_tally* tally, __u32 pid, __u32 tid, __u32 slot) {
  struct block_tally_event* e = scratch_event(slot);
  if (!tally || !e) return 0;
  e->header.type = EVENT_BLOCK_TALLY;
  e->header.cpu = 0;
  e->header.time = tally->first_out;
  e->header.pid = pid;
  e->header.tid = tid;
  e->end_time = tally->last_in;
  e->total_ns = tally->total_ns;
  e->max_ns = tally->max_ns;
  e->stack_hash = tally->stack_hash;
  e->prev_state = tally->prev_state;
  e->count = tally->count;
  e->wakeups = tally->wakeups;
  e->reserved = 0;
  submit_event(e, sizeof(*e), LOST_SCHED);
  tally->first_out = 0;
  kernel_block_count(KERNEL_BLOCKS_TALLIES, 1);
  return 0;
}

/* The stack of `block`'s tally, before the tally's first record. */
__noinline int send_tally_stack(struct thread_block* block, __u32 tid, __u32 slot) {
  struct tally_stack_event* e = scratch_event(slot);
  if (!block || !e) return 0;
  e->header.type = EVENT_TALLY_STACK;
  e->header.cpu = 0;
  e->header.time = block->since;
  e->header.pid = block->pid;
  e->header.tid = tid;
  e->stack_hash = block->stack_hash;
  __u32 frames = copy_stack(&e->stack, &block->stack);
  submit_event(e,
               event_size_with_frames(__builtin_offsetof(struct tally_stack_event, stack), frames),
               LOST_SCHED);
  return 0;
}

struct tallies_sent {
  struct thread_block* block;
  __u32 tid;
  __u32 slot;
};

/* One tally, for bpf_loop: the verifier checks one step, not all of them. */
static long send_tally_step(__u64 index, void* context) {
  struct tallies_sent* c = context;
  struct block_tally* tally = &c->block->tallies[index & (BLOCK_TALLIES - 1)];
  if (tally->first_out != 0) send_tally(tally, c->block->pid, c->tid, c->slot);
  return 0;
}

/* Every tally of `block`'s thread (at its exit, and at the end). */
static __always_inline void send_tallies(struct thread_block* block, __u32 tid, __u32 slot) {
  struct tallies_sent c = {.block = block, .tid = tid, .slot = slot};
  bpf_loop(BLOCK_TALLIES, send_tally_step, &c, 0);
}

struct tally_search {
  struct thread_block* block;
  __u32 same;   /* a tally of the block's state and stack */
  __u32 free;   /* the first free one */
  __u32 oldest; /* the one whose period began first */
};

/* Looks in the set of the block's state and stack only. */
static __always_inline void find_tally(struct tally_search* s) {
  struct thread_block* block = s->block;
  __u64 key = block->stack_hash ^ ((__u64)block->prev_state * 0x9e3779b97f4a7c15ull);
  __u32 first = (__u32)((key ^ (key >> 32)) & (BLOCK_TALLY_SETS - 1)) * BLOCK_TALLY_WAYS;
  __u64 oldest_out = ~0ull;
  s->oldest = first;
  for (__u32 way = 0; way < BLOCK_TALLY_WAYS; ++way) {
    __u32 i = (first + way) & (BLOCK_TALLIES - 1);
    const struct block_tally* tally = &block->tallies[i];
    if (tally->first_out == 0) {
      if (s->free == BLOCK_TALLIES) s->free = i;
      continue;
    }
    if (tally->stack_hash == block->stack_hash && tally->prev_state == block->prev_state) {
      s->same = i;
      return;
    }
    if (tally->first_out < oldest_out) {
      oldest_out = tally->first_out;
      s->oldest = i;
    }
  }
}

/* Counts `block`, short, ended at `in_time` (and by the wake-up held for it,
 * if any), into its thread's tally of its state and stack. */
static __always_inline void tally_short_block(struct thread_block* block, __u32 tid, __u64 in_time,
                                              __u32 slot) {
  struct tally_search s = {
      .block = block, .same = BLOCK_TALLIES, .free = BLOCK_TALLIES, .oldest = 0};
  find_tally(&s);
  __u32 i = s.same;
  if (i < BLOCK_TALLIES) {
    /* A tally covers SUMMARY_PERIOD_NS of trace time at most: a report's
     * --time window cuts it at that resolution. */
    struct block_tally* same = &block->tallies[i & (BLOCK_TALLIES - 1)];
    if (block->since >= same->first_out + SUMMARY_PERIOD_NS)
      send_tally(same, block->pid, tid, slot);
  } else {
    i = s.free;
    if (i >= BLOCK_TALLIES) {
      i = s.oldest;
      send_tally(&block->tallies[i & (BLOCK_TALLIES - 1)], block->pid, tid, slot);
      kernel_block_count(KERNEL_BLOCKS_TALLIES_EARLY, 1);
    }
    if (block->stack_hash != 0) send_tally_stack(block, tid, slot);
  }
  struct block_tally* tally = &block->tallies[i & (BLOCK_TALLIES - 1)];
  __u64 length = in_time > block->since ? in_time - block->since : 0;
  if (tally->first_out == 0) {
    tally->stack_hash = block->stack_hash;
    tally->first_out = block->since;
    tally->prev_state = block->prev_state;
    tally->count = 0;
    tally->total_ns = 0;
    tally->max_ns = 0;
    tally->wakeups = 0;
    tally->reserved = 0;
  }
  tally->last_in = in_time;
  tally->count += 1;
  tally->total_ns += length;
  if (length > tally->max_ns) tally->max_ns = length;
  tally->wakeups += block->wakeup_held;
  kernel_block_count(KERNEL_BLOCKS_SHORT, 1);
  kernel_block_count(KERNEL_BLOCKS_SHORT_NS, length);
  if (block->prev_state == 0) kernel_block_count(KERNEL_BLOCKS_SHORT_PREEMPTED, 1);
  if (block->wakeup_held) kernel_block_count(KERNEL_BLOCKS_WAKEUPS_DROPPED, 1);
}

/* What a target's switch-in decided about its block (decide_switch_in). */
#define SWITCH_IN_HALF_WRITTEN (1u << 0) /* next's half of the switch row is written */
#define SWITCH_IN_ENDS_WAIT (1u << 1)    /* it ends a futex wait of next's */

/* At a target's switch-in (next, not running yet; `block` is its storage):
 * decides the block it ends, sending that block's switch-out row and held
 * wake-up if the block was long, or counting it if it was short; returns
 * SWITCH_IN_* bits. */
__noinline __u32 decide_switch_in(struct thread_block* block, __u32 tid, __u64 now, __u32 slot) {
  /* A block that began before the recording saw the thread is written. */
  if (!block || block->since == 0) return SWITCH_IN_HALF_WRITTEN;
  __u32 decided = SWITCH_IN_HALF_WRITTEN | (block->in_futex_wait ? SWITCH_IN_ENDS_WAIT : 0);
  block->in_futex_wait = 0;
  if (block->holder_wait) {
    __sync_fetch_and_sub(&holder_waits_in_progress, 1);
    block->holder_wait = 0;
  }
  if (block->out_pending) {
    block->out_pending = 0;
    __u64 length = now > block->since ? now - block->since : 0;
    bool preempted = block->prev_state == 0;
    /* A wait that began while the thread was preempted may be one on a lock it holds. */
    bool wait_began = preempted && holder_waits_begun != block->waits_begun;
    if (length < min_block_ns && !wait_began) {
      tally_short_block(block, tid, now, slot);
      block->wakeup_held = 0;
      /* Its switch-out's row, for next's half alone. */
      if (block->next_written) send_late_switch_out(block, tid, 0, slot);
      return decided & ~SWITCH_IN_HALF_WRITTEN;
    }
    if (length < min_block_ns) kernel_block_count(KERNEL_BLOCKS_PREEMPTIONS_KEPT, 1);
    send_late_switch_out(block, tid, 1, slot);
  }
  if (block->wakeup_held) {
    block->wakeup_held = 0;
    send_held_wakeup_row(block, tid, slot);
  }
  return decided;
}

#define SWITCH_OUT_NEXT_TARGET (1u << 0)  /* next is a target: its half is its own block's */
#define SWITCH_OUT_NEXT_WRITTEN (1u << 1) /* and its block's end is written */
#define SWITCH_OUT_FUTEX_WAIT (1u << 2)   /* prev blocks in a futex wait */
#define SWITCH_OUT_HOLDER_WAIT (1u << 3)  /* on a word that may have a holder */

/* At a target's switch-out (prev, `current`; `block` is its storage): notes
 * the block it begins, from the switch's record `e` (its header, next and
 * goroutines) and SWITCH_OUT_* bits; returns whether its half of this
 * switch's row is written now. The caller captured its stack into
 * block->stack and set stack_hash. */

__noinline int note_switch_out(struct thread_block* block, const struct futex_switch_event* e,
                               __u32 how, __u32 slot) {
  if (!block || !e) return 1;
  bool next_is_target = (how & SWITCH_OUT_NEXT_TARGET) != 0;
  bool in_futex_wait = (how & SWITCH_OUT_FUTEX_WAIT) != 0;
  bool holder_wait = (how & SWITCH_OUT_HOLDER_WAIT) != 0;
  /* A second switch-out without a switch-in between (one the kernel did not
   * report): the first block's length is unknown, so its row is written. */
  if (block->out_pending) {
    block->out_pending = 0;
    send_late_switch_out(block, e->header.tid, 1, slot);
  }
  bool first = block->since == 0;
  __u32 prev_state = e->prev_state; /* 0: preempted */
  bool preempted = prev_state == 0;
  bool kept = first || (prev_state & TASK_DEAD_STATE) != 0 ||
              (preempted && (preemptions_written || holder_waits_in_progress > 0));
  block->since = e->header.time;
  block->pid = e->header.pid;
  block->out_cpu = e->header.cpu;
  block->prev_state = e->prev_state;
  block->next_pid = e->next_pid;
  block->next_tid = e->next_tid;
  block->next_was_target = next_is_target;
  block->next_written = (how & SWITCH_OUT_NEXT_WRITTEN) != 0;
  block->prev_goid = e->prev_goid;
  block->next_goid = e->next_goid;
  block->waits_begun = holder_waits_begun;
  block->in_futex_wait = in_futex_wait;
  block->holder_wait = holder_wait;
  block->wakeup_held = 0;
  block->out_pending = !kept;
  if (holder_wait) {
    __sync_fetch_and_add(&holder_waits_in_progress, 1);
    __sync_fetch_and_add(&holder_waits_begun, 1);
  }
  /* The thread's last switch-out: its storage goes with it. */
  if (prev_state & TASK_DEAD_STATE) send_tallies(block, e->header.tid, slot);
  return kept;
}

/* What becomes of a wake-up of a target whose blocks are decided here. */
enum decided_wakeup {
  DECIDED_WAKEUP_ROW = 0,      /* a row now: it ends a block already long, or one written */
  DECIDED_WAKEUP_HELD = 1,     /* held in the block, sent at its switch-in if it is long */
  DECIDED_WAKEUP_FOR_WAIT = 2, /* held so, and it ends a futex wait: the lock rows need it now */
  DECIDED_WAKEUP_NO_BLOCK = 3, /* the wakee is still on its cpu: it ends no block */
};

static __always_inline int decide_wakeup(struct task_struct* wakee_btf) {
  if (wakee_btf->on_cpu) return DECIDED_WAKEUP_NO_BLOCK;
  struct thread_block* block = bpf_task_storage_get(&thread_blocks, wakee_btf, 0, 0);
  if (!block || !block->out_pending || block->wakeup_held) return DECIDED_WAKEUP_ROW;
  __u64 now = bpf_ktime_get_ns();
  if (now - block->since >= min_block_ns) return DECIDED_WAKEUP_ROW;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  block->held.time = now;
  block->held.cpu = bpf_get_smp_processor_id();
  block->held.waker_pid = pid_tgid >> 32;
  block->held.waker_tid = (__u32)pid_tgid;
  block->held.target_cpu = wakee_btf->wake_cpu;
  block->wakeup_held = 1;
  return block->in_futex_wait ? DECIDED_WAKEUP_FOR_WAIT : DECIDED_WAKEUP_HELD;
}

#endif /* INCISE_BPF_KERNEL_BLOCKS_BPF_H */
