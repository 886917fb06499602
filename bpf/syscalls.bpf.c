// SPDX-License-Identifier: GPL-2.0
/* Syscalls (--syscalls LIST|all): sys_enter to sys_exit of the chosen
 * syscalls of target threads, with the user stack at entry. Both raw
 * tracepoints see every syscall of the machine; the number is checked against
 * `syscall_traced` (filled by the recorder) before anything else is done. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/latency.bpf.h"
#include "bpf/target_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define MAX_SYSCALL_NR 1024

/* 1 for each syscall number to time. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, MAX_SYSCALL_NR);
  __type(key, __u32);
  __type(value, __u8);
} syscall_traced SEC(".maps");

static __always_inline bool traced(long nr) {
  if (nr < 0 || nr >= MAX_SYSCALL_NR) return false;
  __u32 index = nr;
  __u8* on = bpf_map_lookup_elem(&syscall_traced, &index);
  return on && *on;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(syscall_enter, struct pt_regs* regs, long nr) {
  if (!traced(nr)) return 0;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  if (!is_target(pid_tgid >> 32)) return 0;
  struct latency_key key = {pid_tgid, 0};
  struct latency_call* call = latency_start(&key, LATENCY_SYSCALL, nr);
  if (call) latency_take_stack(ctx, call);
  return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(syscall_exit, struct pt_regs* regs, long ret) {
  __u64 now = bpf_ktime_get_ns();
  /* The number again, so the other syscalls cost an array look-up, not a
   * hash look-up. */
  if (!traced(BPF_CORE_READ(regs, orig_ax))) return 0;
  struct latency_key key = {bpf_get_current_pid_tgid(), 0};
  long result = ret;
  latency_end(&key, result >= 0 ? (__u64)result : 0, result < 0 ? (__u32)-result : 0, now);
  return 0;
}
