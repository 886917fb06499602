// CPU samples: one perf event per CPU or per target thread (-e EVENT;
// cpu-clock, or cycles with a PMU, by default) runs this program; it keeps
// the samples of target threads and sends time, cpu, pid, tid, period, the
// --counters deltas and the kernel + user stacks to the ring buffer.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/context.bpf.h"
#include "bpf/counter_group.bpf.h"
#include "bpf/event_output.bpf.h"
#include "bpf/events.h"
#include "bpf/goroutine.bpf.h"
#include "bpf/stack.bpf.h"
#include "bpf/stack_copy.bpf.h"
#include "bpf/target_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Whether to walk stacks (-g is the default; off only for tests/benchmarks). */
const volatile bool capture_stack = true;

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data* ctx) {
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tgid = pid_tgid >> 32;
  /* Before the filter: a per-cpu event's counts while others ran are theirs. */
  __u64 counters[MAX_COUNTERS];
  read_counter_deltas(ctx, counters);
  if (!is_target(tgid)) return 0;
  read_contexts(tgid, (__u32)pid_tgid);

  if (user_stack_bytes != 0 && capture_stack) {
    emit_user_stack_sample(ctx, ctx->sample_period, counters);
    return 0;
  }

  struct cpu_sample_event* e = scratch_event(0);
  if (!e) return 0;
  fill_header(&e->header, EVENT_CPU_SAMPLE);
  e->period = ctx->sample_period;
  e->goid = current_goid(tgid);
  for (int i = 0; i < MAX_COUNTERS; i++) e->counters[i] = counters[i];
  if (capture_stack)
    capture_stacks(ctx, &e->stack);
  else
    clear_stack(&e->stack);
  submit_event(e,
               event_size_with_stack(__builtin_offsetof(struct cpu_sample_event, stack), &e->stack),
               LOST_CPU_SAMPLES);
  return 0;
}
