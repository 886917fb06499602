/* Which threads a program records: a pid set, a cgroup and its descendants,
 * or everything.
 *
 * Every program that includes this header gets its own `targets` map and its
 * own copies of the read-only options; the recorder makes all `targets` maps
 * one map (bpf_map__reuse_fd before load) and sets the options in .rodata.
 *
 *   if (!is_target(bpf_get_current_pid_tgid() >> 32)) return 0;
 *   if (!is_target_task(next)) return 0;   // a task that is not `current`
 *
 * The scheduler program adds forked children of targets to `targets`, so
 * `incise-record -- CMD` follows the whole process tree.
 */
#ifndef INCISE_BPF_TARGET_FILTER_BPF_H
#define INCISE_BPF_TARGET_FILTER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#define MAX_TARGETS 65536

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_TARGETS);
  __type(key, __u32);  /* tgid */
  __type(value, __u8); /* 1 */
} targets SEC(".maps");

const volatile bool filter_by_pid = false;
const volatile __u64 target_cgroup_id = 0;
/* The recorder's own process: never a target, whatever the filter (with -a
 * its threads would otherwise lead every report). */
const volatile __u32 recorder_tgid = 0;

static __always_inline bool is_target_pid(__u32 tgid) {
  return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/* Cgroups nest (a systemd slice holds its services' cgroups): a task is in
 * the target cgroup when its cgroup or one of that cgroup's ancestors is
 * the target. MAX_CGROUP_DEPTH levels up are looked at; Kubernetes pods
 * sit 4 below the root, systemd services 2. */
#define MAX_CGROUP_DEPTH 16

static __always_inline bool is_target_cgroup(struct cgroup* cgroup) {
  /* A bounded loop (kernel 5.3+ verifies it without unrolling). */
  for (int level = 0; level < MAX_CGROUP_DEPTH; ++level) {
    if (!cgroup) return false;
    if (BPF_CORE_READ(cgroup, kn, id) == target_cgroup_id) return true;
    struct cgroup_subsys_state* parent = BPF_CORE_READ(cgroup, self.parent);
    if (!parent) return false;
    cgroup = BPF_CORE_READ(parent, cgroup);
  }
  return false;
}

/* For the current task. */
static __always_inline bool is_target(__u32 tgid) {
  if (tgid == recorder_tgid) return false;
  if (filter_by_pid) return is_target_pid(tgid);
  if (target_cgroup_id) {
    if (bpf_get_current_cgroup_id() == target_cgroup_id) return true;
    struct task_struct* task = (struct task_struct*)bpf_get_current_task();
    return is_target_cgroup(BPF_CORE_READ(task, cgroups, dfl_cgrp));
  }
  return true;
}

/* For any task (the cgroup of a task that is not `current` comes from its
 * css_set), whose `tgid` the caller has read. */
static __always_inline bool is_target_task_with(struct task_struct* task, __u32 tgid) {
  if (tgid == recorder_tgid) return false;
  if (filter_by_pid) return is_target_pid(tgid);
  if (target_cgroup_id) return is_target_cgroup(BPF_CORE_READ(task, cgroups, dfl_cgrp));
  return true;
}

static __always_inline bool is_target_task(struct task_struct* task) {
  return is_target_task_with(task, BPF_CORE_READ(task, tgid));
}

#endif /* INCISE_BPF_TARGET_FILTER_BPF_H */
