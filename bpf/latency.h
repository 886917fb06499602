/* Latency records: what bpf/functions.bpf.c, syscalls.bpf.c, block_io.bpf.c
 * and io_uring.bpf.c send to the recorder's latency loaders, and the BPF map
 * layouts of --aggregate that the recorder drains (conventions in
 * bpf/events.h).
 *
 *   case EVENT_LATENCY: onCall((const struct latency_event *)data);
 *   // --aggregate: every flush, for each latency_hist_key of the old generation:
 *   //   lookup latency_hists, read latency_stacks[key.stack_hash], delete
 */
#ifndef INCISE_BPF_LATENCY_H
#define INCISE_BPF_LATENCY_H

#include "bpf/events.h"

#define EVENT_LATENCY 19

/* The values equal format::LatencySource. */
enum latency_source {
  LATENCY_FUNCTION = 1,
  LATENCY_SYSCALL = 2,
  LATENCY_BLOCK_IO = 3,
  LATENCY_IO_URING = 4,
};

/* LOST_* slot of latency drops (format::LostSource::kLatency). */
#define LOST_LATENCY 7

/* Calls in progress at once (all sources of one object): entries are
 * allocated at the start and freed at the end. */
#define LATENCY_MAX_CALLS 65536
/* --aggregate: distinct (process, probe, stack) counted per interval, and
 * distinct stacks kept. A stack seen once the stack map is full is counted
 * without a stack. */
#define LATENCY_MAX_HISTS 16384
#define LATENCY_MAX_STACKS 16384
#define LATENCY_BUCKETS 64

/* header.time = the start, header.cpu the cpu then, header.pid/tid the thread
 * charged; stack = its user stack at the start. */
struct latency_event {
  struct event_header header;
  __u64 duration;
  __u64 probe; /* function id, syscall number, dev_t, io_uring opcode */
  __u64 bytes;
  __u32 source; /* enum latency_source */
  __u32 error;
  __u32 detail; /* block I/O: REQ_OP_* */
  __u32 weight; /* calls the row stands for (--sample N) */
  struct event_stack stack;
};

/* What a call keeps from its start to its end; the stack part doubles as the
 * value of latency_stacks (--aggregate). */
struct latency_stack {
  __u32 pid;
  __u32 user_count;
  __u64 frames[MAX_STACK_DEPTH];
};

struct latency_call {
  __u64 start;
  __u64 probe;
  __u32 tid;
  __u32 cpu;
  __u32 source;
  __u32 detail;
  struct latency_stack stack;
};

/* A call in progress: who (a thread id, a goroutine, a request pointer) and
 * where (for functions, the stack pointer at entry, so recursion and
 * goroutines that move between threads pair up). */
struct latency_key {
  __u64 owner;
  __u64 where;
};

struct latency_hist_key {
  __u32 generation; /* flipped by the recorder before it drains the old one */
  __u32 pid;
  __u32 source;
  __u32 reserved;
  __u64 probe;
  __u64 stack_hash; /* 0: no stack */
};

struct latency_hist {
  __u64 count[LATENCY_BUCKETS];
  __u64 total_ns[LATENCY_BUCKETS];
  __u64 max_ns;
};

/* Function probes: the attach cookie is the probe id | these flags. */
#define FUNCTION_ID_MASK 0xffffffffull
#define FUNCTION_GO (1ull << 32)       /* key by goroutine: r14 is the g */
#define FUNCTION_AT_ENTRY (1ull << 33) /* probed at the function's first byte */
/* Bytes the function has pushed when it reaches the probed offset (the stack
 * pointer at entry is sp + this). */
#define FUNCTION_SP_DELTA_SHIFT 40

#endif /* INCISE_BPF_LATENCY_H */
