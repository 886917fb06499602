/* The goroutine a Go program's thread is running, for a sample.
 *
 * Go keeps the current g in thread-local storage (and in R14, but only
 * while the thread runs Go code of the register ABI: a sample in a
 * syscall, in C code through cgo or in assembly sees something else in
 * R14). The slot is at a fixed offset from the thread's FS base
 * (runtime.tlsg; -8 on amd64 whether or not the binary uses cgo), and the
 * kernel keeps the FS base in the task (thread.fsbase, set by
 * arch_prctl(ARCH_SET_FS) or clone(CLONE_SETTLS), which Go never changes
 * afterwards). Two user reads then: the g, and its goid at the offset the
 * binary's DWARF gives. A thread on its g0 (a system stack: the scheduler,
 * the garbage collector's and the allocator's slow paths) or on its signal
 * g has goid 0; the goroutine its M runs is then g->m->curg, three reads
 * more, at the offsets DWARF gives (nil in the scheduler itself: no
 * goroutine).
 *
 * Non-Go recordings pay nothing: `go_targets` is false in .rodata and the
 * verifier drops the lookup.
 *
 *   e->goid = current_goid(tgid);
 */
#ifndef INCISE_BPF_GOROUTINE_BPF_H
#define INCISE_BPF_GOROUTINE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "bpf/goroutine.h"

/* Whether any target is a Go program (the recorder fills go_processes). */
const volatile bool go_targets = false;

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_GO_PROCESSES);
  __type(key, __u32); /* tgid */
  __type(value, struct go_process);
} go_processes SEC(".maps");

/* The layout of process `tgid` when it is a Go target, else NULL. */
static __always_inline const struct go_process* go_process_of(__u32 tgid) {
  if (!go_targets) return 0;
  return bpf_map_lookup_elem(&go_processes, &tgid);
}

/* The goroutine the current thread runs, in process `go` (not NULL). */
static __always_inline __u64 current_goid_in(const struct go_process* go) {
  struct task_struct* task = bpf_get_current_task_btf();
  __u64 fs_base = BPF_CORE_READ(task, thread.fsbase);
  if (fs_base == 0) return 0;
  __u64 g = 0;
  if (bpf_probe_read_user(&g, sizeof(g), (const void*)(fs_base + go->tls_g)) != 0 || g == 0)
    return 0;
  __u64 goid = 0;
  if (bpf_probe_read_user(&goid, sizeof(goid), (const void*)(g + go->goid_offset)) != 0) return 0;
  if (goid != 0 || go->m_curg_offset == 0) return goid;
  __u64 m = 0;
  if (bpf_probe_read_user(&m, sizeof(m), (const void*)(g + go->g_m_offset)) != 0 || m == 0)
    return 0;
  __u64 curg = 0;
  if (bpf_probe_read_user(&curg, sizeof(curg), (const void*)(m + go->m_curg_offset)) != 0 ||
      curg == 0 || curg == g)
    return 0;
  if (bpf_probe_read_user(&goid, sizeof(goid), (const void*)(curg + go->goid_offset)) != 0)
    return 0;
  return goid;
}

static __always_inline __u64 current_goid(__u32 tgid) {
  const struct go_process* go = go_process_of(tgid);
  return go ? current_goid_in(go) : 0;
}

#endif /* INCISE_BPF_GOROUTINE_BPF_H */
