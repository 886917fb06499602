/* Shared by bpf/stage_clock.bpf.h and tools/bench_sched_stages: the stages
 * of the scheduler program (bpf/sched.bpf.c) whose time a build configured
 * with -DINCISE_BPF_STAGE_CLOCK=ON measures, in the order they run. Each
 * stage's time runs from the end of the one before to its own end; the
 * user-stack stages are those of the switch-out's and the waker's walks. */
#ifndef INCISE_BPF_STAGE_CLOCK_H
#define INCISE_BPF_STAGE_CLOCK_H

enum sched_stage {
  STAGE_TARGET_FILTER = 0, /* entry, and whether either side is a target */
  STAGE_FUTEX_WAIT = 1,    /* context values, the scratch record, the futex wait's facts */
  STAGE_HEADER = 2,        /* the record's header, goroutines, a held wake-up */
  STAGE_KERNEL_STACK = 3,  /* which stacks, and the kernel stack of an uninterruptible block */
  STAGE_NO_STACK = 4,      /* which stacks, when none: about the cost of a mark itself */
  STAGE_USER_SETUP = 5,    /* registers, uprobe state, the walk's scratch */
  STAGE_USER_WINDOW = 6,   /* reading the top words of the user stack */
  STAGE_USER_SEARCH = 7,   /* the thread's memo and the place of its key */
  STAGE_USER_REUSE = 8,    /* a reuse: its check and the frames' copy */
  STAGE_USER_WALK = 9,     /* a walk: a place's check failed or it had none */
  STAGE_SUBMIT = 10,       /* the block's start (--sched-min-block) and the ring */
  SCHED_STAGES = 11
};

/* The per-CPU `sched_stages` array: ns per stage, then runs per stage, then
 * the last mark's time. */
#define SCHED_STAGE_SLOTS (2 * SCHED_STAGES + 1)

#endif /* INCISE_BPF_STAGE_CLOCK_H */
