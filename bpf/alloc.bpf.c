// SPDX-License-Identifier: GPL-2.0
/* Sampled allocations (--alloc): uprobes on the two marker functions of
 * libincise-preload.so, which samples allocations in process and calls
 *
 *   incise_alloc_sampled(block, size, weight, caller)   a sampled allocation
 *   incise_free_sampled(block)                          the free of one
 *
 * so only sampled events trap. The allocation's record carries the user
 * stack from the marker (the same walk as every other stack: CFI tables,
 * or frame pointers before they load); the kernel stack is always the
 * uprobe's trap path and is not taken. */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/alloc.h"
#include "bpf/event_output.bpf.h"
#include "bpf/stack.bpf.h"
#include "bpf/target_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Uprobes run in the thread's own context and never interrupt each other on
 * a CPU: one scratch slot. */
SEC("uprobe")
int BPF_KPROBE(alloc_sampled, void* block, __u64 size, __u64 weight, void* caller) {
  if (!is_target(bpf_get_current_pid_tgid() >> 32)) return 0;
  struct alloc_event* e = scratch_event(0);
  if (!e) return 0;
  fill_header(&e->header, EVENT_ALLOC);
  e->address = (__u64)block;
  e->size = size;
  e->weight = weight;
  e->caller = (__u64)caller;
  capture_user_stack(ctx, &e->stack);
  submit_event(e, event_size_with_stack(__builtin_offsetof(struct alloc_event, stack), &e->stack),
               LOST_ALLOC);
  return 0;
}

SEC("uprobe")
int BPF_KPROBE(free_sampled, void* block) {
  if (!is_target(bpf_get_current_pid_tgid() >> 32)) return 0;
  struct free_event e = {.address = (__u64)block};
  fill_header(&e.header, EVENT_FREE);
  submit_event(&e, sizeof(e), LOST_ALLOC);
  return 0;
}
