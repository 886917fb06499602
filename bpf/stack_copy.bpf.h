/* -g dwarf / hybrid: a cpu sample with the user registers (ip, sp, bp) and a
 * copy of the top of the user stack, for offline CFI unwinding.
 *
 *   if (user_stack_bytes) { emit_user_stack_sample(ctx, period, counters); return 0; }
 *
 * Registers come from bpf_task_pt_regs(current): the user-mode registers
 * saved at the last kernel entry, right whether the sample hit user code
 * (the timer interrupt's entry) or a syscall. The copy is read page by page
 * from sp up, so a stack that ends (the top of the main thread's stack)
 * before `user_stack_bytes` yields what was there instead of nothing; only
 * the bytes copied are sent.
 */
#ifndef INCISE_BPF_STACK_COPY_BPF_H
#define INCISE_BPF_STACK_COPY_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/event_output.bpf.h"
#include "bpf/events.h"
#include "bpf/stack.bpf.h"

/* Bytes of user stack to copy per sample (0: frame-pointer stacks only). */
const volatile __u32 user_stack_bytes = 0;

#define PAGE_BYTES 4096
#define MAX_COPY_PAGES (MAX_USER_STACK_COPY / PAGE_BYTES + 1)

/* One record per cpu. Not a per-CPU array: its values are capped at 32 KiB.
 * A perf-event program cannot be preempted or nested on its cpu, so the
 * slot of the current cpu is ours. The recorder sets max_entries to the
 * number of possible cpus before load. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct cpu_sample_user_stack_event);
} user_stack_scratch SEC(".maps");

static __always_inline void emit_user_stack_sample(void* ctx, __u64 period,
                                                   const __u64 counters[MAX_COUNTERS]) {
  __u32 cpu = bpf_get_smp_processor_id();
  struct cpu_sample_user_stack_event* e = bpf_map_lookup_elem(&user_stack_scratch, &cpu);
  if (!e) return;
  fill_header(&e->header, EVENT_CPU_SAMPLE_USER_STACK);
  e->period = period;
  for (int i = 0; i < MAX_COUNTERS; i++) e->counters[i] = counters[i];

  long kernel_bytes = bpf_get_stack(ctx, e->data, STACK_BYTES, 0);
  if (kernel_bytes < 0) kernel_bytes = 0;
  __u32 kernel_count = ((__u32)kernel_bytes / 8) & 0xff;
  if (kernel_count > MAX_STACK_DEPTH) kernel_count = MAX_STACK_DEPTH;
  long user_bytes = bpf_get_stack(ctx, &e->data[kernel_count * 8], STACK_BYTES, BPF_F_USER_STACK);
  if (user_bytes < 0) user_bytes = 0;
  __u32 user_count = ((__u32)user_bytes / 8) & 0xff;
  if (user_count > MAX_STACK_DEPTH) user_count = MAX_STACK_DEPTH;
  e->kernel_count = kernel_count;
  e->user_count = user_count;

  struct pt_regs* regs = (struct pt_regs*)bpf_task_pt_regs(bpf_get_current_task_btf());
  e->user_ip = regs ? regs->ip : 0;
  e->user_sp = regs ? regs->sp : 0;
  e->user_bp = regs ? regs->bp : 0;

  __u32 frames_at = ((kernel_count + user_count) * 8) & 0x7ff;
  __u32 want = user_stack_bytes;
  if (want > MAX_USER_STACK_COPY) want = MAX_USER_STACK_COPY;
  __u32 copied = 0;
  if (e->user_sp != 0) {
    for (int page = 0; page < MAX_COPY_PAGES; page++) {
      if (copied >= want) break;
      __u64 address = e->user_sp + copied;
      __u32 chunk = PAGE_BYTES - (__u32)(address & (PAGE_BYTES - 1));
      if (chunk > want - copied) chunk = want - copied;
      /* The verifier needs both bounds visibly after the last arithmetic. */
      __u64 at = frames_at + copied;
      barrier_var(at);
      at &= 0x1ffff;
      if (at > sizeof(e->data) - PAGE_BYTES) break;
      __u64 size = chunk;
      barrier_var(size);
      size &= PAGE_BYTES * 2 - 1;
      if (size == 0 || size > PAGE_BYTES) break;
      if (bpf_probe_read_user(&e->data[at], size, (void*)address) != 0) break;
      copied += chunk;
    }
  }
  if (copied > want) copied = want;
  e->stack_bytes = copied;

  __u64 size = __builtin_offsetof(struct cpu_sample_user_stack_event, data) + frames_at + copied;
  if (size > sizeof(*e)) size = sizeof(*e);
  if (bpf_ringbuf_output(&events, e, size, wakeup_flag()) != 0) count_drop(LOST_CPU_SAMPLES);
}

#endif /* INCISE_BPF_STACK_COPY_BPF_H */
