/* Blocks decided in the kernel: what bpf/kernel_blocks.bpf.h sends to
 * recorder/sources/sched_source.cc when the scheduler program decides short
 * blocks itself (--sched-min-block above 0, BTF-enabled tracepoints).
 *
 * Plain C with fixed-width fields (see bpf/events.h).
 *
 *   // ring buffer: EVENT_DECIDED_SWITCH carries a struct decided_switch_event,
 *   // a switch row (or half of one) the program decided to write; a short
 *   // block writes nothing and is counted per (thread, state, stack) into an
 *   // EVENT_BLOCK_TALLY, whose stack came once before in an EVENT_TALLY_STACK.
 */
#ifndef INCISE_BPF_KERNEL_BLOCKS_H
#define INCISE_BPF_KERNEL_BLOCKS_H

#include "bpf/events.h"

/* Next to the types events.h and futex_wait.h use. */
enum kernel_block_event_type {
  EVENT_DECIDED_SWITCH = 21,
  EVENT_BLOCK_TALLY = 22,
  EVENT_TALLY_STACK = 23,
};

/* Trace time a summary row covers at most: the kernel's block tallies, the
 * recorder's block summaries (raw tracepoints) and its futex-wait summaries.
 * A summary is written once per key and period, so the period sets how many
 * summary rows a steady server makes: a PostgreSQL backend's short waits
 * and blocks fall on the same few dozen keys every second, and at one second
 * their summaries outweighed the rest of the scheduler's rows. A report's
 * --time window cuts a summary in proportion to its overlap
 * (analyzer/analyses/summaries; correlate's unblamed waits take it whole). */
#define SUMMARY_PERIOD_NS 5000000000ull

/* decided_switch_event.elided: format::switch_elided's bits. */
#define DECIDED_PREV_ELIDED (1u << 0)     /* kPrevOut: prev's half is not a switch of prev */
#define DECIDED_NEXT_ELIDED (1u << 1)     /* kNextIn */
#define DECIDED_CPU_ROWS_BEFORE (1u << 2) /* kCpuRowsBefore */

/* decided_switch_event.flags */
#define DECIDED_ROW (1u << 0)            /* a row to write (else only the flags below) */
#define DECIDED_LATE (1u << 1)           /* prev's switch-out, sent once its block was long */
#define DECIDED_NEXT_ENDS_WAIT (1u << 2) /* next's switch-in ends a futex wait of next's */

/* header: the switch's time and cpu, pid/tid = prev. */
struct decided_switch_event {
  struct event_header header;
  __u32 prev_state;
  __u32 next_pid;
  __u32 next_tid;
  __u32 elided; /* DECIDED_*_ELIDED, DECIDED_CPU_ROWS_BEFORE */
  __u32 flags;  /* DECIDED_ROW, ... */
  __u32 reserved;
  __u64 prev_goid;
  __u64 next_goid;
  struct event_stack stack; /* prev's off-CPU stack when prev's half is written */
};

/* Short blocks of one thread in one state with one off-CPU stack, counted
 * over [header.time, end_time]: the first one's switch-out to the last one's
 * switch-in. header.pid/tid = the thread. */
struct block_tally_event {
  struct event_header header;
  __u64 end_time;
  __u64 total_ns;
  __u64 max_ns;
  __u64 stack_hash; /* names the stack an EVENT_TALLY_STACK of this thread carried */
  __u32 prev_state;
  __u32 count;
  __u32 wakeups; /* wake-ups of these blocks never sent */
  __u32 reserved;
};

/* The stack a thread's tallies with this hash count their blocks under; sent
 * before the first of them. */
struct tally_stack_event {
  struct event_header header;
  __u64 stack_hash;
  struct event_stack stack;
};

/* Slots of the per-CPU `kernel_block_counts` array, for the recording's note. */
enum kernel_block_count_slot {
  KERNEL_BLOCKS_SHORT = 0,            /* short blocks counted, not written */
  KERNEL_BLOCKS_SHORT_NS = 1,         /* their off-CPU time */
  KERNEL_BLOCKS_SHORT_PREEMPTED = 2,  /* of them, preemptions */
  KERNEL_BLOCKS_PREEMPTIONS_KEPT = 3, /* short preemptions written: a lock wait overlapped */
  KERNEL_BLOCKS_WAKEUPS_DROPPED = 4,  /* wake-ups of short blocks never sent */
  KERNEL_BLOCKS_LATE_ROWS = 5,        /* switch-outs sent once their block was long */
  KERNEL_BLOCKS_TALLIES = 6,          /* tallies sent */
  KERNEL_BLOCKS_TALLIES_EARLY = 7,    /* of them, sent before their period ended: all taken */
  KERNEL_BLOCKS_SWEPT = 8,            /* blocks still open when the recording ended */
  KERNEL_BLOCK_COUNTS
};

#endif /* INCISE_BPF_KERNEL_BLOCKS_H */
