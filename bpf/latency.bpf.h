/* Timing a call from its start to its end, shared by the latency programs
 * (functions, syscalls, block I/O, io_uring): the start keeps who, when and
 * the user stack in `latency_calls`; the end sends one latency_event, or with
 * --aggregate adds the duration to a log2 histogram per (process, probe,
 * stack) in `latency_hists` that the recorder drains every flush.
 *
 *   struct latency_key key = {tid, 0};
 *   struct latency_call *call = latency_start(&key, LATENCY_SYSCALL, nr);
 *   if (call) latency_take_stack(ctx, call);       // at the start, in the caller's context
 *   ...
 *   latency_end(&key, bytes, error, bpf_ktime_get_ns());
 *
 * Options (.rodata, set by the recorder): `sample_every` keeps 1 start in N
 * per CPU (N > 1), `aggregate` counts in BPF instead of sending rows.
 */
#ifndef INCISE_BPF_LATENCY_BPF_H
#define INCISE_BPF_LATENCY_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/event_output.bpf.h"
#include "bpf/events.h"
#include "bpf/latency.h"
#include "bpf/stack.bpf.h"

const volatile __u32 sample_every = 1;
const volatile bool aggregate = false;
const volatile bool with_stacks = true;

/* --aggregate: the generation new counts go to; the recorder flips it, waits
 * for programs still running on the old one, then drains the old one. */
__u32 generation = 0;

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, LATENCY_MAX_CALLS);
  __type(key, struct latency_key);
  __type(value, struct latency_call);
} latency_calls SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, LATENCY_MAX_HISTS);
  __type(key, struct latency_hist_key);
  __type(value, struct latency_hist);
} latency_hists SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, LATENCY_MAX_STACKS);
  __type(key, __u64);
  __type(value, struct latency_stack);
} latency_stacks SEC(".maps");

/* Never written: the initial value of a new histogram. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct latency_hist);
} latency_zero_hist SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} latency_sample_counter SEC(".maps");

/* Scratch slots: a start builds its entry in one, an end its record in another
 * (a block I/O completion can interrupt a start on the same CPU). */
#define LATENCY_SLOT_START 1
#define LATENCY_SLOT_END 2

static __always_inline bool latency_sampled(void) {
  if (sample_every <= 1) return true;
  __u32 zero = 0;
  __u64* counter = bpf_map_lookup_elem(&latency_sample_counter, &zero);
  if (!counter) return true;
  __u64 n = (*counter)++;
  return n % sample_every == 0;
}

/* A new call of the current thread under `key`, or NULL when this start is
 * not kept (sampled out, map full: counted as a drop). The stack is empty
 * until latency_take_stack; `call` points into the map. */
static __always_inline struct latency_call* latency_start(struct latency_key* key, __u32 source,
                                                          __u64 probe) {
  if (!latency_sampled()) return NULL;
  struct latency_call* staging = scratch_event(LATENCY_SLOT_START);
  if (!staging) return NULL;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  staging->start = bpf_ktime_get_ns();
  staging->probe = probe;
  staging->tid = (__u32)pid_tgid;
  staging->cpu = bpf_get_smp_processor_id();
  staging->source = source;
  staging->detail = 0;
  staging->stack.pid = pid_tgid >> 32;
  staging->stack.user_count = 0;
  if (bpf_map_update_elem(&latency_calls, key, staging, BPF_ANY) != 0) {
    count_drop(LOST_LATENCY);
    return NULL;
  }
  return bpf_map_lookup_elem(&latency_calls, key);
}

/* The current thread's user stack into the call (stack.bpf.h's walk). */
static __always_inline void latency_take_stack(void* ctx, struct latency_call* call) {
  if (with_stacks) call->stack.user_count = walk_user_stack(ctx, call->stack.frames);
}

/* Puts the caller's return address at frames[1] when the walk at a function's
 * start missed it: there the frame pointer is still the caller's, so a
 * frame-pointer step goes from the probed function straight to the caller's
 * caller (stack.bpf.h reads [sp] itself only when the first instruction is
 * push %rbp or endbr64; Go functions start with their stack check). */
static __always_inline void latency_keep_caller(struct latency_call* call, __u64 return_address) {
  __u32 count = call->stack.user_count;
  if (count < 1 || count > MAX_STACK_DEPTH) return;
  if (count >= 2 && call->stack.frames[1] == return_address) return;
  if (count == MAX_STACK_DEPTH) count = MAX_STACK_DEPTH - 1;
  /* frames[count] = frames[count - 1], ..., frames[2] = frames[1]: an index
   * the verifier can bound each time (a moving pointer it cannot). */
  for (__u64 step = 0; step < MAX_STACK_DEPTH; step++) {
    __u64 to = (__u64)count - step;
    asm volatile("" : "+r"(to)); /* neither a memmove nor a pointer walk */
    if (to <= 1 || to >= MAX_STACK_DEPTH) break;
    __u64 from = to - 1;
    asm volatile("" : "+r"(from));
    if (from >= MAX_STACK_DEPTH) break;
    call->stack.frames[to] = call->stack.frames[from];
  }
  call->stack.frames[1] = return_address;
  call->stack.user_count = count + 1;
}

static __always_inline __u32 latency_bucket(__u64 ns) {
  __u32 bucket = 0;
  if (ns >> 32) {
    ns >>= 32;
    bucket += 32;
  }
  if (ns >> 16) {
    ns >>= 16;
    bucket += 16;
  }
  if (ns >> 8) {
    ns >>= 8;
    bucket += 8;
  }
  if (ns >> 4) {
    ns >>= 4;
    bucket += 4;
  }
  if (ns >> 2) {
    ns >>= 2;
    bucket += 2;
  }
  if (ns >> 1) bucket += 1;
  return bucket;
}

/* FNV-1a over the pid and the frames: the key of a stack in latency_stacks. */
static __always_inline __u64 latency_stack_hash(const struct latency_stack* stack) {
  __u64 hash = 0xcbf29ce484222325ull ^ stack->pid;
  __u32 count = stack->user_count;
  for (__u32 i = 0; i < MAX_STACK_DEPTH; i++) {
    if (i >= count) break;
    hash = (hash ^ stack->frames[i]) * 0x100000001b3ull;
  }
  return hash ? hash : 1;
}

static __always_inline void latency_count(const struct latency_call* call, __u64 duration) {
  struct latency_hist_key key = {
      .generation = generation,
      .pid = call->stack.pid,
      .source = call->source,
      .probe = call->probe,
  };
  if (call->stack.user_count) {
    __u64 hash = latency_stack_hash(&call->stack);
    long added = bpf_map_update_elem(&latency_stacks, &hash, &call->stack, BPF_NOEXIST);
    if (added == 0 || bpf_map_lookup_elem(&latency_stacks, &hash)) key.stack_hash = hash;
  }
  struct latency_hist* hist = bpf_map_lookup_elem(&latency_hists, &key);
  if (!hist) {
    __u32 zero = 0;
    struct latency_hist* initial = bpf_map_lookup_elem(&latency_zero_hist, &zero);
    if (!initial) return;
    bpf_map_update_elem(&latency_hists, &key, initial, BPF_NOEXIST);
    hist = bpf_map_lookup_elem(&latency_hists, &key);
    if (!hist) {
      count_drop(LOST_LATENCY);
      return;
    }
  }
  __u32 bucket = latency_bucket(duration);
  if (bucket >= LATENCY_BUCKETS) return;
  __sync_fetch_and_add(&hist->count[bucket], 1);
  __sync_fetch_and_add(&hist->total_ns[bucket], duration);
  if (duration > hist->max_ns) hist->max_ns = duration; /* a rare race loses a maximum */
}

static __always_inline void latency_send(const struct latency_call* call, __u64 duration,
                                         __u64 bytes, __u32 error) {
  struct latency_event* e = scratch_event(LATENCY_SLOT_END);
  if (!e) return;
  e->header.type = EVENT_LATENCY;
  e->header.cpu = call->cpu;
  e->header.time = call->start;
  e->header.pid = call->stack.pid;
  e->header.tid = call->tid;
  e->duration = duration;
  e->probe = call->probe;
  e->bytes = bytes;
  e->source = call->source;
  e->error = error;
  e->detail = call->detail;
  e->weight = sample_every > 1 ? sample_every : 1;
  __u32 count = call->stack.user_count;
  if (count > MAX_STACK_DEPTH) count = MAX_STACK_DEPTH;
  e->stack.kernel_count = 0;
  e->stack.user_count = count;
  e->stack.reserved = 0;
  if (count &&
      bpf_probe_read_kernel(e->stack.frames, count * sizeof(__u64), call->stack.frames) != 0)
    e->stack.user_count = 0;
  submit_event(e, event_size_with_stack(__builtin_offsetof(struct latency_event, stack), &e->stack),
               LOST_LATENCY);
}

/* Ends the call under `key` at `now`: a row, or a count with --aggregate.
 * Returns false when there was none (sampled out, or started before the
 * recording). */
static __always_inline bool latency_end(struct latency_key* key, __u64 bytes, __u32 error,
                                        __u64 now) {
  struct latency_call* call = bpf_map_lookup_elem(&latency_calls, key);
  if (!call) return false;
  __u64 duration = now > call->start ? now - call->start : 0;
  if (aggregate)
    latency_count(call, duration);
  else
    latency_send(call, duration, bytes, error);
  bpf_map_delete_elem(&latency_calls, key);
  return true;
}

#endif /* INCISE_BPF_LATENCY_BPF_H */
