// SPDX-License-Identifier: GPL-2.0
/* User functions (--trace BIN:FUNC[+OFFSET]): a uprobe where the call starts
 * and either a uretprobe (C and C++ at the function's first byte) or a uprobe
 * on each of the function's RET instructions (Go, whose runtime moves and
 * copies goroutine stacks, so the return address a uretprobe swaps would be
 * wrong; and probes inside a function, where a uretprobe cannot be planted).
 * A call is keyed by its owner (the thread, or the goroutine: r14 holds the g
 * in Go's register ABI) and the stack pointer at entry, which every return
 * path sees again: recursion pairs up, and a goroutine may return on another
 * thread. For a goroutine the key is the distance from the top of its stack
 * (g.stack.hi), which a stack copy keeps. The attach cookie carries the probe
 * id and FUNCTION_* flags (bpf/latency.h). */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/latency.bpf.h"
#include "bpf/target_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* runtime.g starts with its stack bounds: struct { lo, hi uintptr }. */
#define GO_G_STACK_HI_OFFSET 8

/* The key of a call whose stack pointer at entry was `entry_sp`. */
static __always_inline bool function_key(struct pt_regs* ctx, __u64 cookie, __u64 entry_sp,
                                         struct latency_key* key) {
  if (cookie & FUNCTION_GO) {
    __u64 g = ctx->r14, stack_hi = 0;
    if (!g || bpf_probe_read_user(&stack_hi, sizeof(stack_hi),
                                  (const void*)(g + GO_G_STACK_HI_OFFSET)) != 0)
      return false;
    key->owner = g;
    key->where = stack_hi - entry_sp;
    return true;
  }
  key->owner = bpf_get_current_pid_tgid();
  key->where = entry_sp;
  return true;
}

SEC("uprobe")
int function_start(struct pt_regs* ctx) {
  if (!is_target(bpf_get_current_pid_tgid() >> 32)) return 0;
  __u64 cookie = bpf_get_attach_cookie(ctx);
  __u64 entry_sp = ctx->sp + (cookie >> FUNCTION_SP_DELTA_SHIFT);
  struct latency_key key;
  if (!function_key(ctx, cookie, entry_sp, &key)) return 0;
  struct latency_call* call = latency_start(&key, LATENCY_FUNCTION, cookie & FUNCTION_ID_MASK);
  if (!call) return 0;
  latency_take_stack(ctx, call);
  __u64 return_address;
  if (bpf_probe_read_user(&return_address, sizeof(return_address), (const void*)entry_sp) == 0)
    latency_keep_caller(call, return_address);
  return 0;
}

/* A uretprobe runs once the return address is popped: sp is 8 above entry. */
SEC("uretprobe")
int function_return(struct pt_regs* ctx) {
  __u64 now = bpf_ktime_get_ns();
  struct latency_key key;
  if (!function_key(ctx, bpf_get_attach_cookie(ctx), ctx->sp - 8, &key)) return 0;
  latency_end(&key, 0, 0, now);
  return 0;
}

/* On a RET instruction, before it runs: sp points at the return address. */
SEC("uprobe")
int function_ret_instruction(struct pt_regs* ctx) {
  __u64 now = bpf_ktime_get_ns();
  struct latency_key key;
  if (!function_key(ctx, bpf_get_attach_cookie(ctx), ctx->sp, &key)) return 0;
  latency_end(&key, 0, 0, now);
  return 0;
}
