// SPDX-License-Identifier: GPL-2.0
/* Block I/O (--block-io): each request from block_rq_issue (handed to the
 * driver) to block_rq_complete, with its device, operation and bytes, charged
 * to the thread that submitted it. block_io_start runs in the submitter's own
 * context when the request is made from its bio, so the thread and user stack
 * are taken there; issue often runs later from a kworker or another task's
 * plug flush. A request seen first at issue (no block_io_start on this
 * kernel) is charged to the task issuing it. Only targets' requests are
 * kept. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/latency.bpf.h"
#include "bpf/target_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define REQ_OP_MASK 0xff
#define MINOR_BITS 20 /* the kernel's dev_t: major << 20 | minor */

static __always_inline __u64 request_device(struct request* rq) {
  struct gendisk* disk = BPF_CORE_READ(rq, q, disk);
  if (!disk) return 0;
  return ((__u64)BPF_CORE_READ(disk, major) << MINOR_BITS) | BPF_CORE_READ(disk, first_minor);
}

static __always_inline struct latency_call* start_request(void* ctx, struct request* rq) {
  if (!is_target(bpf_get_current_pid_tgid() >> 32)) return NULL;
  struct latency_key key = {(__u64)rq, 0};
  struct latency_call* call = latency_start(&key, LATENCY_BLOCK_IO, request_device(rq));
  if (!call) return NULL;
  call->detail = BPF_CORE_READ(rq, cmd_flags) & REQ_OP_MASK;
  latency_take_stack(ctx, call);
  return call;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(block_start, struct request* rq) {
  start_request(ctx, rq);
  return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(block_issue, struct request* rq) {
  struct latency_key key = {(__u64)rq, 0};
  struct latency_call* call = bpf_map_lookup_elem(&latency_calls, &key);
  if (call) {
    call->start = bpf_ktime_get_ns(); /* the latency is the device's: issue to completion */
    call->cpu = bpf_get_smp_processor_id();
    return 0;
  }
  start_request(ctx, rq);
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(block_complete, struct request* rq, blk_status_t error, unsigned int nr_bytes) {
  struct latency_key key = {(__u64)rq, 0};
  latency_end(&key, nr_bytes, error, bpf_ktime_get_ns());
  return 0;
}
