/* Kernel + user stack capture into an event's `struct event_stack`.
 *
 *   struct cpu_sample_event *e = scratch_event(0);
 *   ...
 *   capture_stacks(ctx, &e->stack);
 *   submit_event(e, event_size_with_stack(offsetof(struct cpu_sample_event, stack),
 *                                         &e->stack), LOST_CPU_SAMPLES);
 *
 * Kernel frames are written first, user frames right after them (each leaf
 * first). User stacks are unwound in the kernel from the CFI tables the
 * recorder loads for each process (bpf/unwind.bpf.h), so code built without
 * frame pointers (Debian's libc, python3, postgres) walks whole; before a
 * process's tables are loaded, and with -g fp, they are frame-pointer walks.
 */
#ifndef INCISE_BPF_STACK_BPF_H
#define INCISE_BPF_STACK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "bpf/events.h"
#include "bpf/unwind.bpf.h"

#define STACK_BYTES (MAX_STACK_DEPTH * sizeof(__u64))

/* Frames of one bpf_get_stack walk (`flags` 0: kernel, BPF_F_USER_STACK:
 * user, by the kernel's own walker, perf_callchain_user) into `frames` (room
 * for MAX_STACK_DEPTH), leaf first; returns how many. `ctx` is the program's
 * context: bpf_get_stack finds the registers through it. */
static __always_inline __u32 get_stack_frames(void* ctx, __u64* frames, __u64 flags) {
  long bytes = bpf_get_stack(ctx, frames, STACK_BYTES, flags);
  if (bytes < 0) bytes = 0;
  __u32 count = (__u32)bytes / sizeof(__u64);
  return count > MAX_STACK_DEPTH ? MAX_STACK_DEPTH : count;
}

static __always_inline __u32 walk_kernel_stack(void* ctx, __u64* frames) {
  return get_stack_frames(ctx, frames, 0);
}

static __always_inline __u32 kernel_walk_user_stack(void* ctx, __u64* frames) {
  return get_stack_frames(ctx, frames, BPF_F_USER_STACK);
}

/* include/linux/sched.h: tasks without a user stack to walk. */
#define PF_NO_USER_STACK (0x00200000 /* PF_KTHREAD */ | 0x00004000 /* PF_USER_WORKER */)
#define PF_EXITING 0x00000004
#define USER_CS_64 0x33 /* arch/x86: __USER_CS, a 64-bit task in user mode */
/* Frame chains end with fp = 0 (the ABI's terminator: _start and clone clear
 * rbp); nothing is mapped this low (vm.mmap_min_addr >= 4096 unless set to 0). */
#define LOWEST_FRAME_ADDRESS 4096

/* While the kernel handles a uprobe hit on a function's first instruction
 * (push %rbp or endbr64), the kernel's walker (x86 is_uprobe_at_func_entry)
 * reads the return address at sp, since fp is still the caller's. */
static __always_inline bool uprobe_hit_at_function_entry(struct uprobe_task* utask) {
  struct arch_uprobe* probe = BPF_CORE_READ(utask, auprobe);
  if (!probe) return false;
  __u8 insn[4];
  if (bpf_probe_read_kernel(insn, sizeof(insn), probe->insn) != 0) return false;
  if (insn[0] == 0x55) return true;                                                /* push %rbp */
  return insn[0] == 0xf3 && insn[1] == 0x0f && insn[2] == 0x1e && insn[3] == 0xfa; /* endbr64 */
}

/* The return addresses pending uretprobes stand in for (see walk_user_stack). */
struct pending_returns {
  struct return_instance* next; /* innermost first; NULL: none */
  __u64 trampoline;
};

static __always_inline struct pending_returns pending_returns_of(struct task_struct* task,
                                                                 struct uprobe_task* utask) {
  struct pending_returns pending = {NULL, 0};
  struct return_instance* instances = BPF_CORE_READ(utask, return_instances);
  if (!instances) return pending;
  struct xol_area* area = BPF_CORE_READ(task, mm, uprobes_state.xol_area);
  pending.trampoline = area ? BPF_CORE_READ(area, vaddr) : 0;
  if (pending.trampoline) pending.next = instances;
  return pending;
}

/* `address`, or the real return address when it is the trampoline. */
static __always_inline __u64 real_return_address(struct pending_returns* pending, __u64 address) {
  if (!pending->next || address != pending->trampoline) return address;
  struct return_instance* instance = pending->next;
  __u64 real = BPF_CORE_READ(instance, orig_ret_vaddr);
  pending->next = BPF_CORE_READ(instance, next);
  return real;
}

struct fp_walk_context {
  __u64* frames;
  struct pending_returns pending;
  __u64 fp;
  __u32 first; /* frames written before the walk (the ip, the return address at sp) */
  __u32 count;
};

/* One frame of fp_walk, for bpf_loop: the verifier checks one step instead
 * of MAX_STACK_DEPTH inlined ones at every call site. Step `index` writes
 * frame first + index and moves fp to the caller's frame. (Indexed by a
 * count kept in the context instead, the index is a value the verifier
 * tracks exactly, and it would check the step once per depth.) */
static long fp_walk_step(__u64 index, void* context) {
  struct fp_walk_context* c = context;
  __u64 i = c->first + index;
  if (i >= MAX_STACK_DEPTH || c->fp < LOWEST_FRAME_ADDRESS) return 1;
  __u64 frame[2]; /* saved fp, return address */
  /* A kernel address fails access_ok here without a fault. */
  if (bpf_probe_read_user(frame, sizeof(frame), (const void*)c->fp) != 0) return 1;
  /* No code there: the end of the chain (or a stale rbp), not a frame. */
  if (frame[1] < LOWEST_FRAME_ADDRESS) return 1;
  c->frames[i] = real_return_address(&c->pending, frame[1]);
  c->count = i + 1;
  c->fp = frame[0];
  return 0;
}

/* The same frames as the kernel's frame-pointer walker (x86
 * perf_callchain_user: the user ip, then the return address of each frame
 * while fp points at a readable user frame, MAX_STACK_DEPTH in all), minus
 * its last step: it reads the frame at fp = 0 too, and that read faults.
 * The fault is taken and fixed up for every walk, and in a VM an
 * exception is a round trip to the hypervisor: on the same events this walk
 * took 1.2-1.6 us against bpf_get_stack's 6.6-6.9 us (under load; test
 * UserWalkCheck prints both and checks that the frames are equal).
 *
 * Like the kernel's walker (since 6.12) it puts back the return addresses
 * that pending uretprobes replaced (locks `all`, --lock-probe): each probed
 * call in progress returns to the trampoline in the uprobe page instead of
 * its caller, and the kernel keeps the real addresses, innermost first, in
 * the task's return_instances. Without this, a sample or an off-CPU stack
 * inside pthread_mutex_lock loses its caller. */
static __always_inline __u32 fp_walk(struct pt_regs* regs, struct pending_returns pending,
                                     bool at_probed_entry, __u64* frames) {
  /* At the trampoline's first byte, the thread is returning to the caller:
   * the kernel's walker names the caller there too. */
  frames[0] = real_return_address(&pending, regs->ip);
  struct fp_walk_context c = {.frames = frames, .fp = regs->bp, .first = 1, .count = 1};
  if (at_probed_entry) {
    /* The function's frame is not built yet: its return address is at sp. */
    __u64 return_address;
    if (bpf_probe_read_user(&return_address, sizeof(return_address), (const void*)regs->sp) == 0) {
      frames[1] = real_return_address(&pending, return_address);
      c.first = c.count = 2;
    }
  }
  c.pending = pending;
  bpf_loop(MAX_STACK_DEPTH, fp_walk_step, &c, 0);
  return c.count > MAX_STACK_DEPTH ? MAX_STACK_DEPTH : c.count;
}

/* While a uprobe single-steps the probed instruction's copy in its slot of
 * the uprobe page, ip is in that slot (the registers are otherwise the
 * probed code's): the address in the probed code is utask->vaddr plus the
 * same distance. Samples land there in the traps' handling. */
#define UPROBE_XOL_SLOT_BYTES 128 /* arch/x86/include/asm/uprobes.h */
static __always_inline __u64 probed_code_ip(struct pt_regs* regs, struct uprobe_task* utask) {
  __u64 ip = regs->ip;
  /* Not by utask->state: ip moves to the slot before the state says so. */
  __u64 slot = BPF_CORE_READ(utask, xol_vaddr);
  if (!slot || ip < slot || ip >= slot + UPROBE_XOL_SLOT_BYTES) return ip;
  return BPF_CORE_READ(utask, vaddr) + (ip - slot);
}

/* The user registers and pending uretprobes of the current task: NONE for
 * tasks without a user stack, KERNEL for a 32-bit task (the kernel's walker
 * handles its frames), else OURS. */
#define USER_WALK_NONE 0
#define USER_WALK_KERNEL 1
#define USER_WALK_OURS 2
static __always_inline int user_walk_setup(struct pt_regs** regs_out, __u64* ip,
                                           struct pending_returns* pending, bool* at_probed_entry) {
  struct task_struct* task = bpf_get_current_task_btf();
  if (task->flags & PF_NO_USER_STACK) return USER_WALK_NONE;
  struct pt_regs* regs = (struct pt_regs*)bpf_task_pt_regs(task);
  if (!regs) return USER_WALK_NONE;
  if (regs->cs != USER_CS_64) return USER_WALK_KERNEL;
  *regs_out = regs;
  *ip = regs->ip;
  pending->next = NULL;
  pending->trampoline = 0;
  *at_probed_entry = false;
  /* Pointers in the task are read by helper, not loaded directly: the
   * verifier checks each pointer loaded from a trusted one (the task) against
   * the kernel's lists of fields that keep trust, by name searches through
   * the kernel's BTF, every time it passes the load; those searches were over
   * half of the kernel's time loading the programs that walk stacks. */
  struct uprobe_task* utask = BPF_CORE_READ(task, utask);
  if (utask) {
    *pending = pending_returns_of(task, utask);
    *at_probed_entry = uprobe_hit_at_function_entry(utask);
    *ip = probed_code_ip(regs, utask);
  }
  return USER_WALK_OURS;
}

/* The frame-pointer walk alone (-g fp, and the UserWalkCheck test). Like
 * the kernel's walker it starts at regs->ip, the uprobe page's address
 * while a probed instruction is single-stepped. */
static __always_inline __u32 walk_user_stack_fp(void* ctx, __u64* frames) {
  struct pt_regs* regs = NULL;
  __u64 ip;
  struct pending_returns pending;
  bool at_probed_entry;
  int how = user_walk_setup(&regs, &ip, &pending, &at_probed_entry);
  if (how == USER_WALK_KERNEL) return kernel_walk_user_stack(ctx, frames);
  if (how == USER_WALK_NONE || !regs) return 0;
  return fp_walk(regs, pending, at_probed_entry, frames);
}

/* The user stack of the current task into `frames` (room for
 * MAX_STACK_DEPTH), leaf first; returns how many. Unwound from CFI tables
 * once the recorder has loaded them for this process (bpf/unwind.bpf.h), a
 * frame-pointer walk before that and with -g fp. Either way pending
 * uretprobes' return addresses are put back, and a uprobe hit on a
 * function's first instruction keeps its caller (CFI knows the return
 * address is at sp there; the frame-pointer walk reads it there). */
static __always_inline __u32 walk_user_stack(void* ctx, __u64* frames) {
  struct pt_regs* regs = NULL;
  __u64 ip;
  struct pending_returns pending;
  bool at_probed_entry;
  int how = user_walk_setup(&regs, &ip, &pending, &at_probed_entry);
  if (how == USER_WALK_KERNEL) return kernel_walk_user_stack(ctx, frames);
  if (how == USER_WALK_NONE || !regs) return 0;
  struct unwind_walk walk;
  /* CFI walks start in the probed code: the uprobe page has no tables. */
  int count = unwind_user_stack(regs, ip, frames, pending.trampoline, (__u64)pending.next, &walk);
  if (count >= 0) return (__u32)count;
  return fp_walk(regs, pending, at_probed_entry, frames);
}

static __always_inline void capture_stacks(void* ctx, struct event_stack* stack) {
  __u32 kernel_count = walk_kernel_stack(ctx, stack->frames);
  stack->user_count = walk_user_stack(ctx, &stack->frames[kernel_count]);
  stack->kernel_count = kernel_count;
  stack->reserved = 0;
}

/* Only the user stack (for events whose kernel part is always the same). */
static __always_inline void capture_user_stack(void* ctx, struct event_stack* stack) {
  stack->user_count = walk_user_stack(ctx, stack->frames);
  stack->kernel_count = 0;
  stack->reserved = 0;
}

static __always_inline void clear_stack(struct event_stack* stack) {
  stack->kernel_count = 0;
  stack->user_count = 0;
  stack->reserved = 0;
}

/* Bytes of a record whose stack starts `stack_offset` bytes in. */
static __always_inline __u64 event_size_with_stack(__u64 stack_offset,
                                                   const struct event_stack* stack) {
  return stack_offset + __builtin_offsetof(struct event_stack, frames) +
         ((__u64)stack->kernel_count + stack->user_count) * sizeof(__u64);
}

#endif /* INCISE_BPF_STACK_BPF_H */
