/* Per-CPU scratch records, the ring buffer they are sent through, and the
 * drop counters the recorder turns into lost records.
 *
 * Each program that includes this header owns one ring buffer `events`
 * (size set by the recorder before load), a per-CPU `scratch` array to build
 * records too big for the BPF stack, and a per-CPU `drops` array indexed by
 * enum lost_source.
 *
 *   struct cpu_sample_event *e = scratch_event(SCRATCH_SLOT_MAIN);
 *   if (!e) return 0;
 *   ... fill e ...
 *   submit_event(e, size, LOST_CPU_SAMPLES);
 *
 * Programs of one object that can interrupt each other (a wake-up from an
 * interrupt during another tracepoint) use different scratch slots, so a
 * nested record never overwrites the one being built.
 */
#ifndef INCISE_BPF_EVENT_OUTPUT_BPF_H
#define INCISE_BPF_EVENT_OUTPUT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/events.h"

#define SCRATCH_SLOTS 4

struct event_scratch {
  __u8 bytes[EVENT_MAX_SIZE];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, SCRATCH_SLOTS);
  __type(key, __u32);
  __type(value, struct event_scratch);
} scratch SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4 << 20); /* the recorder resizes it before load */
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, LOST_SOURCE_SLOTS);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

static __always_inline void* scratch_event(__u32 slot) {
  return bpf_map_lookup_elem(&scratch, &slot);
}

/* One more in slot `source` of a per-CPU counter array like `drops`. */
static __always_inline void count_drop_in(void* counters, __u32 source) {
  __u64* count = bpf_map_lookup_elem(counters, &source);
  if (count) *count += 1;
}

static __always_inline void count_drop(__u32 source) {
  count_drop_in(&drops, source);
}

/* Waking the recorder for each record (the ring's default when the reader has
 * caught up) makes it an event source of its own: the wake-up switches out a
 * recorded thread, the scheduler program records that switch, which wakes the
 * recorder again — ~90,000 events/s from an idle CPU workload. The recorder
 * polls every 100 ms anyway, so a record wakes it only once the ring is a
 * quarter full, early enough that a burst does not overflow it. Process
 * events (fork, exec, exit, comm) are rare and wake it at once: it must read
 * /proc/PID/maps of a new image before a short-lived process is gone. */
static __always_inline __u64 ring_wakeup_flag(void* ring) {
  __u64 pending = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);
  __u64 size = bpf_ringbuf_query(ring, BPF_RB_RING_SIZE);
  return pending >= size / 4 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline __u64 wakeup_flag(void) {
  return ring_wakeup_flag(&events);
}

static __always_inline void submit_event(void* event, __u64 size, __u32 lost_source) {
  if (size > EVENT_MAX_SIZE) size = EVENT_MAX_SIZE;
  __u64 flags = lost_source == LOST_PROCESS ? BPF_RB_FORCE_WAKEUP : wakeup_flag();
  if (bpf_ringbuf_output(&events, event, size, flags) != 0) count_drop(lost_source);
}

/* Fills the common header for the current task. */
static __always_inline void fill_header(struct event_header* h, __u32 type) {
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  h->type = type;
  h->cpu = bpf_get_smp_processor_id();
  h->time = bpf_ktime_get_ns();
  h->pid = pid_tgid >> 32;
  h->tid = (__u32)pid_tgid;
}

#endif /* INCISE_BPF_EVENT_OUTPUT_BPF_H */
