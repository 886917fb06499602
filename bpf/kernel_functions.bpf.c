// SPDX-License-Identifier: GPL-2.0
/* Kernel functions (--trace kernel:FUNC): fentry to fexit of one kernel
 * function, with the user stack of the calling task. The recorder opens one
 * copy of this object per function and sets both programs' attach target
 * before load; kernels that refuse fentry (EPERM at load, as some hardened or
 * virtualised ones do) leave kernel functions out, and the recorder says so.
 * A call is keyed by thread and function: a recursive call of the function
 * times only its innermost level. */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/latency.bpf.h"
#include "bpf/target_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 probe_id = 0;

SEC("fentry/placeholder")
int BPF_PROG(kernel_function_entry) {
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  if (!is_target(pid_tgid >> 32)) return 0;
  struct latency_key key = {pid_tgid, probe_id};
  struct latency_call* call = latency_start(&key, LATENCY_FUNCTION, probe_id);
  if (call) latency_take_stack(ctx, call);
  return 0;
}

SEC("fexit/placeholder")
int BPF_PROG(kernel_function_exit) {
  __u64 now = bpf_ktime_get_ns();
  struct latency_key key = {bpf_get_current_pid_tgid(), probe_id};
  latency_end(&key, 0, 0, now);
  return 0;
}
