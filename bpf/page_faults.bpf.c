// SPDX-License-Identifier: GPL-2.0
/* Page faults: one software page-fault perf event per CPU (PERF_SAMPLE_ADDR,
 * sample period 1 by default) runs this program; it keeps the faults of
 * target threads and sends the data address with kernel + user stacks. */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/context.bpf.h"
#include "bpf/event_output.bpf.h"
#include "bpf/events.h"
#include "bpf/page_faults.h"
#include "bpf/stack.bpf.h"
#include "bpf/target_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("perf_event")
int on_page_fault(struct bpf_perf_event_data* ctx) {
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tgid = pid_tgid >> 32;
  if (!is_target(tgid)) return 0;
  read_contexts(tgid, (__u32)pid_tgid);

  struct page_fault_event* e = scratch_event(0);
  if (!e) return 0;
  fill_header(&e->header, EVENT_PAGE_FAULT);
  e->address = ctx->addr;
  capture_stacks(ctx, &e->stack);
  submit_event(e,
               event_size_with_stack(__builtin_offsetof(struct page_fault_event, stack), &e->stack),
               LOST_PAGE_FAULTS);
  return 0;
}
