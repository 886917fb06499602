/* Kernel stacks of the places threads block, walked once and then reused:
 * the scheduler program's (bpf/sched.bpf.c) switch-out kernel stacks
 * (uninterruptible blocks by default, every block with --sched-stacks all).
 *
 *   __u32 kernel_count = walk_switch_kernel_stack(ctx, stack->frames);
 *
 * A kernel walk costs microseconds with interrupts off, and a server's
 * uninterruptible blocks (a backend waiting for a page, a buffer's I/O, the
 * mmap lock) come back to the same few paths. Every caller of this program,
 * from the syscall or fault entry down to the scheduler's tracepoint, keeps
 * its return address at a fixed depth under the task's saved user registers
 * (the top of its kernel stack) while this program runs. So a walk's frames
 * are kept per thread and user place (the syscall and user ip; up to
 * KERNEL_STACK_VARIANTS paths each), with the depth of each return address;
 * the next block from that key copies them instead of walking if every one
 * of those return addresses is still at its depth (those under the entry's
 * all moved by one shift, the syscall's random stack offset: see
 * kernel_stack_still_there). The same return addresses at the same depths is the same chain of
 * calls, so a reused stack is what a walk would give. The walk's first frame
 * is this program's own call site (the same every time), the second its
 * return into the tracepoint, above all the stack this program and its
 * helpers use (its frame may be a private stack, elsewhere).
 *
 * The words under the registers are matched deepest first, from this
 * program's return address up, each frame above the one before. Not the
 * other way: between the entry's frame and the ones under it lies the
 * random offset's padding, never written by this syscall, holding earlier
 * syscalls' frames at their own offsets; matched from the entry down, the
 * frames under it were often found there, at depths the next block does
 * not keep, and the place was walked again (a third to a half of
 * PostgreSQL's fdatasync blocks). Not kept: a walk of which some frame
 * after the first is not found in the KERNEL_STACK_WINDOW_WORDS read (a
 * deeper stack). A frame found under this program's return address (a copy
 * an earlier, deeper block left there) fails every later check, its slot
 * being the helpers' then: that place is walked again, never reused wrongly.
 */
#ifndef INCISE_BPF_KERNEL_WAIT_STACK_BPF_H
#define INCISE_BPF_KERNEL_WAIT_STACK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/events.h"
#include "bpf/stack.bpf.h"
#include "bpf/task_memo.bpf.h"
#include "bpf/wait_stack.bpf.h"

/* Words read under the registers (8 KB, half a 16-KB stack): a power of two,
 * indices into it are masked. */
#define KERNEL_STACK_WINDOW_WORDS 1024
/* How far a syscall's random stack offset moves frames between two blocks. */
#define KERNEL_STACK_MAX_SHIFT_WORDS 128
/* Paths kept per place, a power of two: one syscall can block on several
 * paths in turn (fdatasync: a page's writeback, the inode's buffer, the
 * disk's flush). */
#define KERNEL_STACK_VARIANTS 4
/* Places kept per thread, the least recently used replaced: a thread blocks
 * uninterruptibly at few places (a backend: its commit's flush, a page it
 * faults in). */
#define KERNEL_STACK_PLACES 2
#define KERNEL_STACK_NO_VARIANT 0xff

struct kernel_stack_frames {
  __u32 count;                   /* 0: a free variant */
  __u32 first_checked;           /* frames[first_checked..count) are at depth[] */
  __u16 depth[MAX_STACK_DEPTH];  /* words under the registers */
  __u64 frames[MAX_STACK_DEPTH]; /* leaf first */
};

/* A user place (the syscall, or -1 in a fault, and the user ip) and the
 * kernel paths blocks there took. Paths taken in turn are checked in that
 * turn: after a block on path v, the path that followed v last time is
 * checked first, so a cycle of paths costs one check a block. */
struct kernel_stack_place {
  __u64 syscall;
  __u64 user_ip;
  __u64 used; /* bpf_ktime_get_ns of its last block; 0: a free place */
  __u8 last_variant;
  __u8 successor[KERNEL_STACK_VARIANTS];
  __u8 reserved[3];
  struct kernel_stack_frames variants[KERNEL_STACK_VARIANTS];
};

/* A thread's places, in the task's own local storage (found from the task
 * in one step, freed with it; only the thread itself uses it, in its own
 * context), allocated at its first kept walk: 10.3 KB, for at most
 * KERNEL_STACK_MEMO_THREADS threads at a time (a thread past that walks
 * every time); released at the thread's exit. */
struct kernel_stack_memo {
  struct kernel_stack_place places[KERNEL_STACK_PLACES];
};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct kernel_stack_memo);
} kernel_wait_stacks SEC(".maps");

#define KERNEL_STACK_MEMO_THREADS 2048
__u64 kernel_stack_memo_threads = 0; /* threads holding a memo now */

struct kernel_stack_scratch {
  struct kernel_stack_frames value;
  __u64 window[KERNEL_STACK_WINDOW_WORDS]; /* the words under the registers */
};

/* One slot: the switch program runs with interrupts off, nothing nests. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct kernel_stack_scratch);
} kernel_wait_stack_scratch SEC(".maps");

struct kernel_stack_search {
  struct kernel_stack_scratch* s;
  __u32 count; /* frames walked */
  __u32 next;  /* the frame looked for */
  bool whole;  /* frames[1..count) all found */
};

/* Words of the window one bpf_loop step of a walk's search reads (as
 * KERNEL_STACK_SHIFTS_PER_STEP below). */
#define KERNEL_STACK_WORDS_PER_STEP 8

/* KERNEL_STACK_WORDS_PER_STEP words of the window, deepest first, for
 * bpf_loop: is each the next frame looked for? */
static long kernel_stack_search_step(__u64 step, void* context) {
  struct kernel_stack_search* c = context;
  /* Bounded before any arithmetic: the verifier does not bound a step by the
   * loop's count, and the compiler may turn the word's index into a pointer
   * offset of the step's. */
  barrier_var(step);
  if (step >= KERNEL_STACK_WINDOW_WORDS / KERNEL_STACK_WORDS_PER_STEP) return 1;
  for (__u32 j = 0; j < KERNEL_STACK_WORDS_PER_STEP; ++j) {
    __u64 index = step * KERNEL_STACK_WORDS_PER_STEP + j;
    if (index >= KERNEL_STACK_WINDOW_WORDS) return 1;
    __u64 i = c->next;
    barrier_var(i);
    if (i == 0 || i >= MAX_STACK_DEPTH || i >= c->count) return 1;
    if (c->s->window[index & (KERNEL_STACK_WINDOW_WORDS - 1)] != c->s->value.frames[i]) continue;
    c->s->value.depth[i] = (__u16)(KERNEL_STACK_WINDOW_WORDS - index);
    c->next = (__u32)i + 1;
    if (c->next < c->count) continue;
    c->whole = true;
    return 1;
  }
  return 0;
}

struct kernel_stack_check {
  const struct kernel_stack_frames* known;
  const __u64* window; /* `span` words, the deepest first */
  __u32 span;
  __u32 outermost; /* the frame above the syscall's random offset */
  __s64 shift;     /* words the frames under it moved */
  bool same;
};

/* The word `depth` words under the registers, or 0 outside the window. */
static __always_inline __u64 kernel_stack_word(const struct kernel_stack_check* c, __s64 depth) {
  if (depth <= 0 || depth > c->span) return 0;
  return c->window[(c->span - depth) & (KERNEL_STACK_WINDOW_WORDS - 1)];
}

/* Candidate shifts one bpf_loop step checks: a step's callback costs about
 * as much as several shifts' checks, and the search runs at every reuse. */
#define KERNEL_STACK_SHIFTS_PER_STEP 8
#define KERNEL_STACK_SHIFT_STEPS                                               \
  ((2 * KERNEL_STACK_MAX_SHIFT_WORDS + 1 + KERNEL_STACK_SHIFTS_PER_STEP - 1) / \
   KERNEL_STACK_SHIFTS_PER_STEP)

/* KERNEL_STACK_SHIFTS_PER_STEP candidate shifts, for bpf_loop: is the frame
 * under the outermost one there? */
static long kernel_stack_shift_step(__u64 step, void* context) {
  struct kernel_stack_check* c = context;
  barrier_var(step); /* as in kernel_stack_search_step */
  if (step >= KERNEL_STACK_SHIFT_STEPS) return 1;
  __u64 i = c->outermost - 1;
  barrier_var(i);
  if (i >= MAX_STACK_DEPTH) return 1;
  __s64 depth = (__s64)c->known->depth[i];
  __u64 frame = c->known->frames[i];
  for (__u32 j = 0; j < KERNEL_STACK_SHIFTS_PER_STEP; ++j) {
    __u64 index = step * KERNEL_STACK_SHIFTS_PER_STEP + j;
    if (index > 2 * KERNEL_STACK_MAX_SHIFT_WORDS) return 1;
    /* Deepest first: above the frame is the offset's padding, with stale
     * copies of it from earlier syscalls; under it are live frames. */
    __s64 shift = KERNEL_STACK_MAX_SHIFT_WORDS - (__s64)index;
    if (kernel_stack_word(c, depth + shift) == frame) {
      c->shift = shift;
      c->same = true;
      return 1;
    }
  }
  return 0;
}

/* Kept frames one bpf_loop step checks (as KERNEL_STACK_SHIFTS_PER_STEP). */
#define KERNEL_STACK_FRAMES_PER_STEP 4

/* KERNEL_STACK_FRAMES_PER_STEP kept frames, for bpf_loop: is each return
 * address still at its depth (moved by the shift under the outermost frame)? */
static long kernel_stack_check_step(__u64 step, void* context) {
  struct kernel_stack_check* c = context;
  barrier_var(step); /* as in kernel_stack_search_step */
  if (step >= MAX_STACK_DEPTH) return 1;
  for (__u32 j = 0; j < KERNEL_STACK_FRAMES_PER_STEP; ++j) {
    __u64 i = (__u64)c->known->first_checked + step * KERNEL_STACK_FRAMES_PER_STEP + j;
    barrier_var(i);
    if (i >= c->known->count || i >= MAX_STACK_DEPTH) return 1;
    __s64 depth = (__s64)c->known->depth[i] + (i < c->outermost ? c->shift : 0);
    if (c->known->depth[i] == 0 || kernel_stack_word(c, depth) != c->known->frames[i]) {
      c->same = false;
      return 1;
    }
  }
  return 0;
}

/* What the checks of one block's kept paths share: the window, read once
 * (and again, longer, for a path that reaches deeper), and where the frame
 * under the entry's is now. That frame is the same return address on every
 * path from one syscall, so its search runs once per block, not per path. */
struct kernel_stack_block {
  __u32 span;           /* words of the scratch window read: 0, not read yet */
  __u64 under_entry;    /* its return address (0: not found yet) */
  __s64 under_entry_at; /* its depth now */
};

/* Whether the frames `known` keeps are still at their depths under the
 * current task's saved user registers:
 * the outermost (the entry's) where it was, the others all moved by one
 * shift, the random offset each syscall puts under its entry frame
 * (CONFIG_RANDOMIZE_KSTACK_OFFSET: up to 1023 bytes). The window is the
 * scratch's, `span` words under the registers, the deepest first. A global function:
 * the verifier checks it and its two loops once, not for each kept path at
 * every state the switch program reaches them in (inlined, that was nearly
 * all of the program's verification). */
__noinline int kernel_stack_still_there(const struct kernel_stack_frames* known,
                                        struct kernel_stack_block* block) {
  __u32 zero = 0;
  struct kernel_stack_scratch* s = bpf_map_lookup_elem(&kernel_wait_stack_scratch, &zero);
  const char* top = (const char*)bpf_task_pt_regs(bpf_get_current_task_btf());
  if (!known || !block || !s || !top) return 0;
  __u32 count = known->count;
  if (known->first_checked >= count || count > MAX_STACK_DEPTH) return false;
  __u32 span = known->depth[known->first_checked] + KERNEL_STACK_MAX_SHIFT_WORDS;
  if (span > KERNEL_STACK_WINDOW_WORDS) span = KERNEL_STACK_WINDOW_WORDS;
  if (span > block->span) {
    /* The verifier needs both bounds visibly after the last arithmetic. */
    __u64 bytes = span * sizeof(__u64);
    barrier_var(bytes);
    bytes &= KERNEL_STACK_WINDOW_WORDS * sizeof(__u64) * 2 - 1;
    if (bytes == 0 || bytes > KERNEL_STACK_WINDOW_WORDS * sizeof(__u64)) return false;
    if (bpf_probe_read_kernel(s->window, bytes, top - bytes) != 0) return false;
    block->span = span;
  }
  struct kernel_stack_check c = {.known = known,
                                 .window = s->window,
                                 .span = block->span,
                                 .outermost = count - 1,
                                 .same = true};
  if (c.outermost > known->first_checked) {
    __u64 under = c.outermost - 1;
    barrier_var(under);
    if (under >= MAX_STACK_DEPTH) return false;
    if (block->under_entry != 0 && block->under_entry == known->frames[under]) {
      c.shift = block->under_entry_at - (__s64)known->depth[under];
      if (c.shift > KERNEL_STACK_MAX_SHIFT_WORDS || c.shift < -KERNEL_STACK_MAX_SHIFT_WORDS)
        return false;
    } else {
      c.same = false;
      bpf_loop(KERNEL_STACK_SHIFT_STEPS, kernel_stack_shift_step, &c, 0);
      if (!c.same) return false;
      block->under_entry = known->frames[under];
      block->under_entry_at = (__s64)known->depth[under] + c.shift;
    }
  }
  bpf_loop((MAX_STACK_DEPTH + KERNEL_STACK_FRAMES_PER_STEP - 1) / KERNEL_STACK_FRAMES_PER_STEP,
           kernel_stack_check_step, &c, 0);
  return c.same;
}

/* The place of (syscall, user_ip) in `memo`, or one to take for it: a free
 * one, else the least recently used (then *fresh is set). */
static __always_inline struct kernel_stack_place* kernel_stack_place_of(
    struct kernel_stack_memo* memo, __u64 syscall, __u64 user_ip, bool* fresh) {
  struct kernel_stack_place* oldest = &memo->places[0];
  for (__u32 i = 0; i < KERNEL_STACK_PLACES; ++i) {
    struct kernel_stack_place* place = &memo->places[i];
    if (place->used != 0 && place->syscall == syscall && place->user_ip == user_ip) {
      *fresh = false;
      return place;
    }
    if (place->used < oldest->used) oldest = place;
  }
  *fresh = true;
  return oldest;
}

static __always_inline void kernel_stack_note_variant(struct kernel_stack_place* place,
                                                      __u32 variant, __u64 now) {
  __u32 last = place->last_variant;
  if (last < KERNEL_STACK_VARIANTS) place->successor[last] = (__u8)variant;
  place->last_variant = (__u8)variant;
  place->used = now;
}

/* Walks or reuses (see above) the current task's kernel stack into `frames`
 * (room for MAX_STACK_DEPTH), leaf first; returns how many. */
static __always_inline __u32 walk_switch_kernel_stack(void* ctx, __u64* frames) {
  __u32 zero = 0;
  struct kernel_stack_scratch* s = bpf_map_lookup_elem(&kernel_wait_stack_scratch, &zero);
  struct task_struct* task = bpf_get_current_task_btf();
  const char* top = (const char*)bpf_task_pt_regs(task);
  if (!s || !top) return walk_kernel_stack(ctx, frames);
  const struct pt_regs* regs = (const struct pt_regs*)top;
  __u64 syscall = regs->orig_ax;
  __u64 user_ip = regs->ip;
  __u64 now = bpf_ktime_get_ns();
  struct kernel_stack_memo* memo = bpf_task_storage_get(&kernel_wait_stacks, task, 0, 0);
  struct kernel_stack_place* place = NULL;
  bool fresh = true;
  if (memo) place = kernel_stack_place_of(memo, syscall, user_ip, &fresh);
  __u32 unused_variant = KERNEL_STACK_VARIANTS;
  if (place && !fresh) {
    struct kernel_stack_block block = {};
    __u32 last = place->last_variant;
    __u32 first = last < KERNEL_STACK_VARIANTS ? place->successor[last] : 0;
    for (__u32 k = 0; k < KERNEL_STACK_VARIANTS; ++k) {
      __u32 variant = (first + k) & (KERNEL_STACK_VARIANTS - 1);
      struct kernel_stack_frames* known = &place->variants[variant];
      if (known->count == 0) {
        if (unused_variant == KERNEL_STACK_VARIANTS) unused_variant = variant;
        continue;
      }
      if (!kernel_stack_still_there(known, &block)) continue;
      __u32 count = known->count;
      if (count > MAX_STACK_DEPTH) count = MAX_STACK_DEPTH;
      barrier_var(count);
      if (count > 0 && bpf_probe_read_kernel(frames, count * sizeof(__u64), known->frames) == 0) {
        kernel_stack_note_variant(place, variant, now);
        wait_stack_count(KERNEL_STACK_REUSED);
        return count;
      }
    }
  }
  __u32 count = walk_kernel_stack(ctx, frames);
  bool kept = false;
  if (count > MAX_STACK_DEPTH) count = MAX_STACK_DEPTH;
  barrier_var(count);
  if (count > 1 &&
      bpf_probe_read_kernel(s->window, sizeof(s->window),
                            top - KERNEL_STACK_WINDOW_WORDS * sizeof(__u64)) == 0 &&
      bpf_probe_read_kernel(s->value.frames, count * sizeof(__u64), frames) == 0) {
    struct kernel_stack_search c = {.s = s, .count = count, .next = 1};
    bpf_loop(KERNEL_STACK_WINDOW_WORDS / KERNEL_STACK_WORDS_PER_STEP, kernel_stack_search_step, &c,
             0);
    if (c.whole && !memo) {
      memo = task_memo_new(&kernel_wait_stacks, &kernel_stack_memo_threads,
                           KERNEL_STACK_MEMO_THREADS, task);
      if (memo) place = kernel_stack_place_of(memo, syscall, user_ip, &fresh);
    }
    if (c.whole && place) {
      if (fresh) {
        place->syscall = syscall;
        place->user_ip = user_ip;
        place->last_variant = KERNEL_STACK_NO_VARIANT;
        for (__u32 v = 0; v < KERNEL_STACK_VARIANTS; ++v) {
          place->successor[v] = 0;
          place->variants[v].count = 0;
        }
        unused_variant = 0;
      }
      /* A new path takes a free variant, else replaces one at random. */
      __u32 variant = unused_variant < KERNEL_STACK_VARIANTS
                          ? unused_variant
                          : bpf_get_prandom_u32() & (KERNEL_STACK_VARIANTS - 1);
      s->value.count = count;
      s->value.first_checked = 1;
      kept = bpf_probe_read_kernel(&place->variants[variant & (KERNEL_STACK_VARIANTS - 1)],
                                   sizeof(s->value), &s->value) == 0;
      if (kept) kernel_stack_note_variant(place, variant, now);
    }
  }
  wait_stack_count(kept ? KERNEL_STACK_WALKED : KERNEL_STACK_NOT_KEPT);
  return count;
}

/* The program's context as a global function's argument (libbpf's
 * bpf_helpers.h has it from 1.4 on). */
#ifndef __arg_ctx
#define __arg_ctx __attribute__((btf_decl_tag("arg:ctx")))
#endif

/* walk_switch_kernel_stack into stack->frames, as a global function: the
 * verifier checks it once, on its own, instead of once for every state in
 * which the user walk after it begins (inlined, the two took most of its
 * million instructions with --sched-stacks all). Returns how many frames,
 * at most MAX_STACK_DEPTH. */
__noinline int switch_kernel_stack(void* ctx __arg_ctx, struct event_stack* stack) {
  if (!stack) return 0;
  return (int)walk_switch_kernel_stack(ctx, stack->frames);
}

#endif /* INCISE_BPF_KERNEL_WAIT_STACK_BPF_H */
