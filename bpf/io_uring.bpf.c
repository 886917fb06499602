// SPDX-License-Identifier: GPL-2.0
/* io_uring (--io-uring): each request from io_uring_submit_req to its
 * io_uring_complete, per opcode, charged to the submitting thread and its
 * user stack at submission. Whoever runs the request meanwhile (the
 * submitter inline, an io-wq worker, a completion interrupt) is inside the
 * interval, so io-wq worker time counts for the submitter. A multishot
 * request (IORING_CQE_F_MORE) gives a row per completion, each timed from
 * the one before. Requests are keyed by their io_kiocb. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/latency.bpf.h"
#include "bpf/target_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define CQE_F_MORE (1u << 1)

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(uring_submit, struct io_kiocb* req) {
  if (!is_target(bpf_get_current_pid_tgid() >> 32)) return 0;
  struct latency_key key = {(__u64)req, 0};
  struct latency_call* call = latency_start(&key, LATENCY_IO_URING, BPF_CORE_READ(req, opcode));
  if (call) latency_take_stack(ctx, call);
  return 0;
}

SEC("tp_btf/io_uring_complete")
int BPF_PROG(uring_complete, struct io_ring_ctx* ring, void* req, struct io_uring_cqe* cqe) {
  __u64 now = bpf_ktime_get_ns();
  struct latency_key key = {(__u64)req, 0};
  struct latency_call* call = bpf_map_lookup_elem(&latency_calls, &key);
  if (!call) return 0;
  __s32 res = BPF_CORE_READ(cqe, res);
  __u32 flags = BPF_CORE_READ(cqe, flags);
  if (flags & CQE_F_MORE) {
    /* More completions follow: send this one and keep the entry. */
    __u64 duration = now > call->start ? now - call->start : 0;
    if (aggregate)
      latency_count(call, duration);
    else
      latency_send(call, duration, res >= 0 ? res : 0, res < 0 ? -res : 0);
    call->start = now;
    return 0;
  }
  latency_end(&key, res >= 0 ? res : 0, res < 0 ? -res : 0, now);
  return 0;
}
