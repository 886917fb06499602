/* Ring-buffer records shared by the BPF programs and the recorder.
 *
 * Plain C with fixed-width fields so the kernel side (which sees vmlinux.h)
 * and the recorder (which sees <linux/types.h>) agree on every byte. Every
 * record starts with `struct event_header`, whose first field is the event
 * type, so one ring buffer can carry several kinds:
 *
 *   const struct event_header *h = data;
 *   switch (h->type) {
 *   case EVENT_CPU_SAMPLE: handle((const struct cpu_sample_event *)data); break;
 *   ...
 *   }
 *
 * Records that carry a stack end with `struct event_stack`; only the frames
 * actually captured are sent, so a record's size is
 * offsetof(record, stack.frames) + (kernel_count + user_count) * 8.
 */
#ifndef INCISE_BPF_EVENTS_H
#define INCISE_BPF_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MAX_STACK_DEPTH 127
/* --counters: software counters read with every cpu sample (bpf/counter_group.bpf.h). */
#define MAX_COUNTERS 4
#define TASK_COMM_LEN 16

/* Largest record any program builds in its per-CPU scratch buffer. */
#define EVENT_MAX_SIZE 4096

enum event_type {
  EVENT_CPU_SAMPLE = 1,
  EVENT_SCHED_SWITCH = 2,
  EVENT_WAKEUP = 3,
  EVENT_PROCESS = 4,               /* fork / exec / exit / comm */
  EVENT_CPU_SAMPLE_USER_STACK = 5, /* -g dwarf/hybrid: bpf/stack_copy.bpf.h */
  /* Reserved for the lock and page-fault sources (bpf/locks.h, ...). */
  EVENT_LOCK = 16,
  EVENT_FUTEX = 17, /* unused: futex waits come from the scheduler program */
  EVENT_PAGE_FAULT = 18,
  EVENT_CONTEXT = 19, /* a thread's context value changed (bpf/context.h) */
};

/* Index of the per-CPU `drops` counters; the values equal format::LostSource. */
enum lost_source {
  LOST_CPU_SAMPLES = 1,
  LOST_SCHED = 2,
  LOST_LOCKS = 3,
  LOST_PAGE_FAULTS = 4,
  LOST_PROCESS = 5,
  LOST_CONTEXT = 8,       /* context records dropped (bpf/context.bpf.h) */
  LOST_CONTEXT_READS = 9, /* context values that could not be read */
  LOST_ALLOC = 10,        /* sampled allocations or frees (bpf/alloc.bpf.c) */
  LOST_SOURCE_SLOTS = 16,
};

struct event_header {
  __u32 type; /* enum event_type */
  __u32 cpu;
  __u64 time; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
  __u32 pid;  /* tgid of the thread the event is about */
  __u32 tid;
};

/* Kernel frames first, then user frames; each leaf first. */
struct event_stack {
  __u16 kernel_count;
  __u16 user_count;
  __u32 reserved;
  __u64 frames[2 * MAX_STACK_DEPTH];
};

struct cpu_sample_event {
  struct event_header header;
  __u64 period; /* ns of cpu-clock (or events) this sample stands for */
  __u64 goid;   /* Go targets: the goroutine running (bpf/goroutine.bpf.h); 0 = none */
  /* --counters: each counter's count since the previous sample of the same
   * perf event (thread with -p / -- CMD, cpu otherwise); 0 past counter_count. */
  __u64 counters[MAX_COUNTERS];
  struct event_stack stack;
};

/* -g dwarf / hybrid: a cpu sample with the user registers and a copy of the
 * top of the user stack. `data` holds kernel_count + user_count frames (as in
 * struct event_stack), then stack_bytes bytes copied from user_sp upwards; only
 * those are sent. */
#define MAX_USER_STACK_COPY 65536
#define USER_STACK_COPY_SLACK 4096 /* one page-sized read may start near the end */
struct cpu_sample_user_stack_event {
  struct event_header header;
  __u64 period;
  __u64 counters[MAX_COUNTERS]; /* as in cpu_sample_event */
  __u64 user_ip;
  __u64 user_sp;
  __u64 user_bp;
  __u16 kernel_count;
  __u16 user_count;
  __u32 stack_bytes;
  __u8 data[2 * MAX_STACK_DEPTH * 8 + MAX_USER_STACK_COPY + USER_STACK_COPY_SLACK];
};

/* Which scheduler events carry stacks (--sched-stacks; sched.bpf.c). */
enum sched_stack_mode {
  SCHED_STACKS_OFF = 0, /* none */
  SCHED_STACKS_BLOCKED =
      1,                /* blocking switches: user, kernel too when uninterruptible; wakers: user */
  SCHED_STACKS_ALL = 2, /* also preemptions (user) and wakers' kernel stacks */
};

/* sched_switch_event.target_flags and wakeup_event.target_flags: the
 * recorder keeps a thread's blocks (off-CPU intervals) only for targets. */
#define SWITCH_PREV_TARGET (1u << 0)
#define SWITCH_NEXT_TARGET (1u << 1)
/* The kernel decides blocks (bpf/kernel_blocks.h): a futex wait's switch
 * record that carries the wait's facts only, not a switch row. */
#define SWITCH_NOT_A_ROW (1u << 3)
#define WAKEE_TARGET (1u << 0)
/* The kernel decides blocks: a wake-up the lock rows need now, whose row
 * waits for the end of the wakee's block (sent again then, if it is long). */
#define WAKEUP_NOT_A_ROW (1u << 1)

/* header.pid/tid = prev (the thread leaving the cpu); stack = prev's off-CPU stack. */
struct sched_switch_event {
  struct event_header header;
  __u32 prev_state;   /* 0 = preempted (still runnable), else the task state */
  __u32 target_flags; /* SWITCH_*_TARGET: which side the target filter selected */
  __u32 next_pid;
  __u32 next_tid;
  __u64 prev_goid; /* Go targets: the goroutine prev's thread leaves; 0 = none */
  __u64 next_goid; /* and the one next's thread resumes (sched.bpf.c) */
  struct event_stack stack;
};

/* header.pid/tid = the waker (0 in interrupt context with no task of interest). */
struct wakeup_event {
  struct event_header header;
  __u32 wakee_pid;
  __u32 wakee_tid;
  __u32 target_cpu;   /* wakee's last cpu (sched_waking runs before the choice) */
  __u32 is_new_task;  /* sched_wakeup_new */
  __u32 waker_flags;  /* WAKER_* (bpf/futex_wait.h) */
  __u32 target_flags; /* WAKEE_TARGET when the wakee is a target thread */
  struct event_stack stack;
};

enum process_event_kind {
  PROCESS_FORK = 1, /* header = parent, peer = child */
  PROCESS_EXEC = 2,
  PROCESS_EXIT = 3, /* peer_pid = exit code when the whole process exits */
  PROCESS_COMM = 4,
};

struct process_event {
  struct event_header header;
  __u32 kind; /* enum process_event_kind */
  __u32 peer_pid;
  __u32 peer_tid;
  __u32 is_process_exit; /* exit: the last thread of the process */
  char comm[TASK_COMM_LEN];
};

#endif /* INCISE_BPF_EVENTS_H */
