/* --counters: the counts of the software counters grouped under the
 * sampling event, read at every sample, as deltas since the previous sample
 * of the same perf event.
 *
 *   __u64 deltas[MAX_COUNTERS];
 *   read_counter_deltas(ctx, deltas);
 *
 * The recorder opens each counter with the sampling event as group leader,
 * in --counters order, so the leader's sibling list holds them in that
 * order. perf would read the group into its own sample record
 * (PERF_SAMPLE_READ | PERF_FORMAT_GROUP), but a perf event that runs a BPF
 * program writes no sample record, so the program reads the siblings' counts
 * itself. A software event adds to `count` as it happens (there is no PMU
 * register to read back), so `count` is the group read's value at this
 * instant. With -p and -- CMD the events are per thread and inherited: the
 * overflowing event is the current thread's copy and so are its siblings.
 *
 * The previous counts are kept per leader event (its address): one per
 * thread of a per-thread event, one per cpu of a per-cpu one. A leader
 * address the kernel reused for a newer event starts from lower counts; a
 * count below the kept one is then taken as counted from zero.
 */
#ifndef INCISE_BPF_COUNTER_GROUP_BPF_H
#define INCISE_BPF_COUNTER_GROUP_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "bpf/events.h"

/* How many counters --counters grouped under the sampling event. */
const volatile __u32 counter_count = 0;

struct counter_marks {
  __u64 counts[MAX_COUNTERS];
};

/* Threads that exited leave their entries; LRU drops the oldest. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 32768);
  __type(key, __u64);
  __type(value, struct counter_marks);
} counter_marks SEC(".maps");

static __always_inline void read_counter_deltas(struct bpf_perf_event_data* ctx,
                                                __u64 deltas[MAX_COUNTERS]) {
  for (int i = 0; i < MAX_COUNTERS; i++) deltas[i] = 0;
  if (counter_count == 0) return;
  /* The context is the kernel's bpf_perf_event_data_kern; only regs and the
   * sample period are readable through it directly. */
  struct bpf_perf_event_data_kern* kernel_ctx = (void*)ctx;
  struct perf_event* leader = BPF_CORE_READ(kernel_ctx, event);
  if (!leader) return;
  __u64 key = (__u64)leader;
  struct counter_marks now = {};
  __u64 head = (__u64)leader + bpf_core_field_offset(struct perf_event, sibling_list);
  __u64 node = (__u64)BPF_CORE_READ(leader, sibling_list.next);
  for (int i = 0; i < MAX_COUNTERS; i++) {
    if (i >= counter_count || node == 0 || node == head) break;
    struct perf_event* sibling =
        (void*)(node - bpf_core_field_offset(struct perf_event, sibling_list));
    __s64 count = BPF_CORE_READ(sibling, count.a.a.counter);
    now.counts[i] = count > 0 ? (__u64)count : 0;
    node = (__u64)BPF_CORE_READ(sibling, sibling_list.next);
  }
  struct counter_marks* before = bpf_map_lookup_elem(&counter_marks, &key);
  for (int i = 0; i < MAX_COUNTERS; i++) {
    __u64 previous = before ? before->counts[i] : 0;
    deltas[i] = now.counts[i] >= previous ? now.counts[i] - previous : now.counts[i];
  }
  if (before)
    *before = now;
  else
    bpf_map_update_elem(&counter_marks, &key, &now, BPF_ANY);
}

#endif /* INCISE_BPF_COUNTER_GROUP_BPF_H */
