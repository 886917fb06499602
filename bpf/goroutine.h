/* Where a Go program keeps its threads' current goroutine: what the
 * recorder (recorder/sources/goroutine_ids.cc) puts in `go_processes` for each Go
 * target and bpf/goroutine.bpf.h reads at a sample.
 *
 * Plain C with fixed-width fields (see bpf/events.h for the conventions).
 *
 *   struct go_process layout = {.tls_g = -8, .goid_offset = 152, .g_m_offset = 48,
 *                               .m_curg_offset = 192};
 *   bpf_map_update_elem(go_processes_fd, &pid, &layout, BPF_ANY);
 */
#ifndef INCISE_BPF_GOROUTINE_H
#define INCISE_BPF_GOROUTINE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Go targets a recording can hold (-p lists, a command). */
#define MAX_GO_PROCESSES 1024

struct go_process {
  __s64 tls_g;         /* the current g's slot, from the thread's FS base (amd64: -8) */
  __u64 goid_offset;   /* of goid in runtime.g, from the binary's DWARF */
  __u64 g_m_offset;    /* of m in runtime.g; 0 = not known */
  __u64 m_curg_offset; /* of curg in runtime.m (the M's goroutine); 0 = not known */
};

#endif /* INCISE_BPF_GOROUTINE_H */
