/* Whether a task is a target, remembered in the task's local storage: the
 * scheduler program asks it of both sides of every switch and wake-up on
 * the machine, and the `targets` lookup (a hash of the tgid and a bucket of
 * a 64 Ki-entry table) or the walk up a task's cgroups cost more than the
 * rest of a switch a target is not in.
 *
 *   if (!is_target_task_cached(next, next_tgid)) ...   // tp_btf: a task the verifier knows
 *
 * A task's answer holds for the recording in pid mode: targets are added
 * before the programs attach, and a target's forked child is added before
 * it first runs (bpf/sched.bpf.c). In cgroup mode a task can move between
 * cgroups, so the recorder moves `target_generation` on at every poll and
 * each task's answer is asked again after it. */
#ifndef INCISE_BPF_TARGET_CACHE_BPF_H
#define INCISE_BPF_TARGET_CACHE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/target_filter.bpf.h"

struct target_verdict {
  __u32 generation; /* target_generation when decided; 0: never */
  __u32 target;
};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct target_verdict);
} target_verdicts SEC(".maps");

__u32 target_generation = 1;

/* `task` must be a pointer the local-storage helper accepts (tp_btf's). */
static __always_inline bool is_target_task_cached(struct task_struct* task, __u32 tgid) {
  if (!filter_by_pid && !target_cgroup_id) return tgid != recorder_tgid;
  struct target_verdict* verdict =
      bpf_task_storage_get(&target_verdicts, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!verdict) return is_target_task_with(task, tgid); /* an exiting task */
  __u32 generation = target_generation;
  if (verdict->generation == generation) return verdict->target != 0;
  bool target = is_target_task_with(task, tgid);
  verdict->target = target;
  verdict->generation = generation;
  return target;
}

#endif /* INCISE_BPF_TARGET_CACHE_BPF_H */
