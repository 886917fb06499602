/* User stacks of the places threads block and wake others, walked once and
 * then reused: the scheduler program's (bpf/sched.bpf.c) switch-out and
 * waker stacks.
 *
 *   __u32 count = walk_wait_stack(ctx, &stack->frames[kernel_count], SLOT_SWITCH);
 *
 * A server blocks at a handful of places (an event loop's epoll_wait, a
 * backend's recv or semaphore), thousands of times a second, and in code
 * without frame pointers each of those CFI walks costs about half a
 * microsecond a frame, in the blocking thread's own context. So the frames
 * of a CFI walk are kept per thread, keyed by where the walk starts: the
 * syscall the thread is in and its saved user ip, sp and bp. The next walk
 * from the same key copies those frames instead of walking, if the return
 * addresses the first walk found in the top words of the stack
 * (WAIT_STACK_WINDOW_WORDS of them; the first few callers' frames, up to
 * WAIT_STACK_CHECKED_FRAMES) are still there, at the same places.
 *
 * What a reused stack can get wrong: callers above the checked ones, when
 * the thread blocks in the same function at the same stack depth through
 * another path. An entry lives at most WAIT_STACK_MEMO_LIFETIME_NS, so a
 * walk that ended early (a library whose tables were not loaded yet) is
 * walked again soon.
 *
 * Not kept: frame-pointer walks (-g fp, or a process whose tables are not
 * loaded yet; they are cheap), a walk that did not reach the outermost
 * frame (_start, clone3), a walk whose first caller is not in the top words, a thread with uprobes
 * in progress (pending uretprobes change the frames), and registers saved outside a syscall (an
 * interrupted user thread: its ip changes every time).
 */
#ifndef INCISE_BPF_WAIT_STACK_BPF_H
#define INCISE_BPF_WAIT_STACK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/events.h"
#include "bpf/stack.bpf.h"
#include "bpf/stage_clock.bpf.h"
#include "bpf/task_memo.bpf.h"
#include "bpf/wait_stack.h"

/* Places kept per thread, the oldest replaced first: a thread blocks and
 * wakes others at a handful of places (a backend: its client's socket, a
 * lock's semaphore, a commit's flush; the wake-ups of its lock releases). */
#define WAIT_STACK_PLACES 8
#define WAIT_STACK_WINDOW_WORDS 32 /* a power of two: offsets into it are masked */
#define WAIT_STACK_CHECKED_FRAMES 3
#define WAIT_STACK_MEMO_LIFETIME_NS 1000000000ull
/* The slots of concurrent callers (a wake-up can run in an interrupt). */
#define WAIT_STACK_MEMO_SLOTS 2
/* Above this, orig_ax is no syscall number (an interrupt's ~vector, or -1). */
#define WAIT_STACK_MAX_SYSCALL 1024

/* Where a walk starts: the syscall the thread is in and its saved user
 * registers. */
struct wait_stack_key {
  __u64 syscall;
  __u64 ip;
  __u64 sp;
  __u64 bp;
};

/* What a reuse is decided on, kept apart from the frames so that the search
 * over a thread's places reads a few cache lines. */
struct wait_stack_place {
  struct wait_stack_key key;
  __u64 walked; /* bpf_ktime_get_ns of the walk; 0: a free place */
  __u32 count;
  __u32 checked;                            /* callers[0..checked) are in the window */
  __u64 callers[WAIT_STACK_CHECKED_FRAMES]; /* the walk's frames[1..] */
  __u8 at[WAIT_STACK_CHECKED_FRAMES + 1];   /* their word offsets in it */
  __u32 reserved;
};

/* A thread's places, in the task's own local storage: found from the task in
 * one step, with no hash of a shared table and no bucket lock, and freed
 * with the task. Only the thread itself reads or writes it, in its own
 * context. Allocated at a thread's first kept walk, 8.8 KB each, for at most
 * WAIT_STACK_MEMO_THREADS threads at a time (a thread past that walks every
 * time); given back at the thread's exit. */
struct wait_stack_memo {
  struct wait_stack_place places[WAIT_STACK_PLACES];
  __u32 next_replaced; /* the place a new walk takes when none is free */
  __u32 last_found;    /* searched first: a thread often blocks at one place in a row */
  __u64 frames[WAIT_STACK_PLACES][MAX_STACK_DEPTH];
};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct wait_stack_memo);
} wait_stacks SEC(".maps");

__u64 wait_stack_memo_threads = 0; /* threads holding a memo now */

struct wait_stack_scratch {
  struct wait_stack_key key;
  __u64 window[WAIT_STACK_WINDOW_WORDS]; /* the words at the top of the user stack */
  /* Here, not on the stack: the scheduler program's frame leaves too little
   * room for the walk beside the unwinder's own calls. */
  struct unwind_walk walk;
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, WAIT_STACK_MEMO_SLOTS);
  __type(key, __u32);
  __type(value, struct wait_stack_scratch);
} wait_stack_scratch SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, WAIT_STACK_COUNTS);
  __type(key, __u32);
  __type(value, __u64);
} wait_stack_counts SEC(".maps");

static __always_inline void wait_stack_count(__u32 slot) {
  __u64* count = bpf_map_lookup_elem(&wait_stack_counts, &slot);
  if (count) *count += 1;
}

/* Whether the callers an earlier walk found in the window are still there. */
static __always_inline bool wait_stack_still_there(const struct wait_stack_place* known,
                                                   const __u64* window) {
  if (known->checked == 0) return false;
  for (__u32 i = 0; i < WAIT_STACK_CHECKED_FRAMES; ++i) {
    if (i >= known->checked) break;
    if (window[known->at[i] & (WAIT_STACK_WINDOW_WORDS - 1)] != known->callers[i]) return false;
  }
  return true;
}

struct wait_stack_search {
  const __u64* window;
  struct wait_stack_place* place; /* a fresh walk's callers, where their offsets go */
  __u32 want;                     /* callers to look for */
  __u32 found;
};

/* One word of the window, for bpf_loop (the verifier checks one step
 * instead of every word of an inlined search): is it the next caller? */
static long wait_stack_search_step(__u64 index, void* context) {
  struct wait_stack_search* c = context;
  __u32 i = c->found;
  if (i >= c->want || i >= WAIT_STACK_CHECKED_FRAMES || index >= WAIT_STACK_WINDOW_WORDS) return 1;
  if (c->window[index] != c->place->callers[i]) return 0;
  c->place->at[i] = (__u8)index;
  c->found = i + 1;
  return 0;
}

/* Finds a fresh walk's callers in the window, in order; returns how many. */
static __always_inline __u32 wait_stack_find_callers(const __u64* window,
                                                     struct wait_stack_place* place,
                                                     __u32 callers) {
  struct wait_stack_search c = {.window = window, .place = place, .want = callers, .found = 0};
  bpf_loop(WAIT_STACK_WINDOW_WORDS, wait_stack_search_step, &c, 0);
  return c.found;
}

static __always_inline bool wait_stack_same_key(const struct wait_stack_key* a,
                                                const struct wait_stack_key* b) {
  return a->syscall == b->syscall && a->ip == b->ip && a->sp == b->sp && a->bp == b->bp;
}

struct wait_stack_place_search {
  struct wait_stack_memo* memo;
  const struct wait_stack_key* key;
  __u64 now;
  __u32 found;      /* the key's live place */
  __u32 free_place; /* the first free or expired one */
};

/* Every place, in one bpf_loop step: a loop over the places inlined in the
 * program would be verified once per place with every state the search can
 * be in, and a step per place would pay a callback call per place. */
static long wait_stack_place_step(__u64 index, void* context) {
  struct wait_stack_place_search* c = context;
  for (__u32 k = 0; k < WAIT_STACK_PLACES; ++k) {
    __u32 i = (c->memo->last_found + k) & (WAIT_STACK_PLACES - 1);
    const struct wait_stack_place* place = &c->memo->places[i];
    bool live = place->walked != 0 && c->now - place->walked < WAIT_STACK_MEMO_LIFETIME_NS;
    if (live && wait_stack_same_key(&place->key, c->key)) {
      c->found = i;
      return 1;
    }
    if (!live && c->free_place == WAIT_STACK_PLACES) c->free_place = i;
  }
  return 1;
}

/* The live place of `key` in `memo`, or WAIT_STACK_PLACES. With `for_walk`,
 * the place a kept walk goes to instead: the key's own (its callers moved),
 * else a free or expired one, else the next to replace in turn. */
static __always_inline __u32 wait_stack_place_of(struct wait_stack_memo* memo,
                                                 const struct wait_stack_key* key, __u64 now,
                                                 bool for_walk) {
  struct wait_stack_place_search c = {.memo = memo,
                                      .key = key,
                                      .now = now,
                                      .found = WAIT_STACK_PLACES,
                                      .free_place = WAIT_STACK_PLACES};
  bpf_loop(1, wait_stack_place_step, &c, 0);
  if (c.found < WAIT_STACK_PLACES) memo->last_found = c.found;
  if (c.found < WAIT_STACK_PLACES || !for_walk) return c.found;
  if (c.free_place < WAIT_STACK_PLACES) return c.free_place;
  __u32 next = memo->next_replaced % WAIT_STACK_PLACES;
  memo->next_replaced = next + 1;
  return next;
}

/* Walks or reuses (see above) the current task's user stack into `frames`
 * (room for MAX_STACK_DEPTH), leaf first; returns how many. The same frames
 * as walk_user_stack (bpf/stack.bpf.h) unless reused wrongly as above. */
static __always_inline __u32 walk_wait_stack(void* ctx, __u64* frames, __u32 slot) {
  struct pt_regs* regs = NULL;
  __u64 ip;
  struct pending_returns pending;
  bool at_probed_entry;
  int how = user_walk_setup(&regs, &ip, &pending, &at_probed_entry);
  if (how == USER_WALK_KERNEL) return kernel_walk_user_stack(ctx, frames);
  if (how == USER_WALK_NONE || !regs) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  struct wait_stack_scratch* scratch = bpf_map_lookup_elem(&wait_stack_scratch, &slot);
  if (!scratch) return fp_walk(regs, pending, at_probed_entry, frames);
  struct wait_stack_scratch* s = NULL; /* the scratch, where the walk may be kept */
  struct wait_stack_memo* memo = NULL;
  __u64 now = 0;
  if (!pending.next && !at_probed_entry && regs->orig_ax < WAIT_STACK_MAX_SYSCALL) s = scratch;
  stage_clock_end(STAGE_USER_SETUP);
  if (s) {
    s->key.syscall = regs->orig_ax;
    s->key.ip = ip;
    s->key.sp = regs->sp;
    s->key.bp = regs->bp;
    /* No window, no check: not kept. */
    if (bpf_probe_read_user(s->window, sizeof(s->window), (const void*)regs->sp) != 0) s = NULL;
  }
  stage_clock_end(STAGE_USER_WINDOW);
  if (s) {
    now = bpf_ktime_get_ns();
    memo = bpf_task_storage_get(&wait_stacks, task, 0, 0);
  }
  /* The key's place is found first and checked after, once: a check inlined
   * in the search would be verified once per place. */
  __u32 same_key = s && memo ? wait_stack_place_of(memo, &s->key, now, false) : WAIT_STACK_PLACES;
  stage_clock_end(STAGE_USER_SEARCH);
  if (same_key < WAIT_STACK_PLACES) {
    __u32 i = same_key & (WAIT_STACK_PLACES - 1);
    struct wait_stack_place* place = &memo->places[i];
    if (wait_stack_still_there(place, s->window)) {
      __u32 count = place->count;
      if (count > MAX_STACK_DEPTH) count = MAX_STACK_DEPTH;
      if (count > 0 && bpf_probe_read_kernel(frames, count * sizeof(__u64), memo->frames[i]) == 0) {
        wait_stack_count(WAIT_STACK_REUSED);
        stage_clock_end(STAGE_USER_REUSE);
        return count;
      }
    }
  }
  /* Only a walk that reached the outermost frame is kept: one that ended
   * early (a caller without CFI yet, a zero return address) would be
   * repeated for every block at that place. The unwinder counts how its
   * walks end per CPU, and nothing else runs on this CPU meanwhile (this
   * program runs with interrupts off). */
  __u32 outermost = UNWIND_END_OUTERMOST;
  __u64* whole_walks = s ? bpf_map_lookup_elem(&unwind_stats, &outermost) : NULL;
  __u64 whole_before = whole_walks ? *whole_walks : 0;
  /* CFI walks start in the probed code: the uprobe page has no tables. */
  int count =
      unwind_user_stack(regs, ip, frames, pending.trampoline, (__u64)pending.next, &scratch->walk);
  if (count < 0) {
    wait_stack_count(WAIT_STACK_NOT_KEPT);
    return fp_walk(regs, pending, at_probed_entry, frames);
  }
  if (count > MAX_STACK_DEPTH) count = MAX_STACK_DEPTH;
  bool kept = false;
  bool whole = s && count > 1 && whole_walks && *whole_walks != whole_before;
  if (whole && !memo)
    memo = task_memo_new(&wait_stacks, &wait_stack_memo_threads, WAIT_STACK_MEMO_THREADS, task);
  if (whole && memo) {
    /* Chosen after the walk: a place index known before it would be tracked
     * through the unwinder's verification, once per value. */
    __u32 place_for_walk = wait_stack_place_of(memo, &s->key, now, true);
    __u32 i = place_for_walk & (WAIT_STACK_PLACES - 1);
    struct wait_stack_place* place = &memo->places[i];
    place->walked = 0;
    __u32 callers = (__u32)count - 1;
    if (callers > WAIT_STACK_CHECKED_FRAMES) callers = WAIT_STACK_CHECKED_FRAMES;
    for (__u32 k = 0; k < WAIT_STACK_CHECKED_FRAMES; ++k)
      place->callers[k] = k < callers ? frames[k + 1] : 0;
    if (bpf_probe_read_kernel(memo->frames[i], count * sizeof(__u64), frames) == 0) {
      place->checked = wait_stack_find_callers(s->window, place, callers);
      if (place->checked > 0) {
        place->key = s->key;
        place->count = count;
        place->reserved = 0;
        place->walked = now;
        memo->last_found = i;
        kept = true;
      }
    }
  }
  wait_stack_count(kept ? WAIT_STACK_WALKED : WAIT_STACK_NOT_KEPT);
  stage_clock_end(STAGE_USER_WALK);
  return (__u32)count;
}

#endif /* INCISE_BPF_WAIT_STACK_BPF_H */
