/* Where the scheduler program's time goes, stage by stage (bpf/stage_clock.h),
 * in a build configured with -DINCISE_BPF_STAGE_CLOCK=ON; in any other build
 * the marks are nothing. --bpf-stats says what a program costs per run; this
 * says which of its parts, so a change to one is measured on a real server
 * (tools/bench_sched_stages reads the array while it records).
 *
 *   stage_clock_start();               // the program's entry
 *   stage_clock_end(STAGE_HEADER);     // the end of a stage
 *
 * A mark is a call and two clock reads (STAGE_NO_STACK is about one mark's
 * cost). A wake-up in an interrupt that lands inside a process-context
 * wake-up moves the outer one's last mark: that stage is then short. */
#ifndef INCISE_BPF_STAGE_CLOCK_BPF_H
#define INCISE_BPF_STAGE_CLOCK_BPF_H

#ifdef INCISE_BPF_STAGE_CLOCK
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/stage_clock.h"

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, SCHED_STAGE_SLOTS);
  __type(key, __u32);
  __type(value, __u64);
} sched_stages SEC(".maps");

/* Not inlined: the program's stack has no room for the marks' locals. */
static __noinline void stage_clock_mark(__u32 stage) {
  __u64 now = bpf_ktime_get_ns();
  __u32 last_slot = 2 * SCHED_STAGES;
  __u64* last = bpf_map_lookup_elem(&sched_stages, &last_slot);
  if (!last) return;
  if (stage < SCHED_STAGES) {
    __u64* ns = bpf_map_lookup_elem(&sched_stages, &stage);
    if (ns) *ns += now - *last;
    __u32 runs_slot = SCHED_STAGES + stage;
    __u64* runs = bpf_map_lookup_elem(&sched_stages, &runs_slot);
    if (runs) *runs += 1;
  }
  *last = bpf_ktime_get_ns();
}
#define stage_clock_start() stage_clock_mark(SCHED_STAGES)
#define stage_clock_end(stage) stage_clock_mark(stage)
#else
#define stage_clock_start() ((void)0)
#define stage_clock_end(stage) ((void)0)
#endif

#endif /* INCISE_BPF_STAGE_CLOCK_BPF_H */
