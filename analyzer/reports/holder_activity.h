// What lock holders did inside their critical sections: the correlation at
// the heart of `incise correlate`.
//
// Per holder thread, one time-ordered pass merges its critical sections,
// its scheduler switches, its CPU samples and its page faults, and finds:
//  - how often the holder was switched out inside a section, preempted
//    (prev_state 0, still runnable) or blocked, and the off-CPU time inside
//    the section;
//  - which samples and faults fell inside sections (counted once per
//    enclosing section, so nested locks each get them);
// then, per lock, how much of other threads' waiting on that same lock
// overlapped the holder's off-CPU time inside the section.
//
// Sections are half-open [start, end): an event at `start` is inside, one at
// `end` is not. Off-CPU time starts only at a switch-out seen in the trace.
// Results are grouped per (holder thread, lock, acquire site).
//
// HolderActivityBuilder takes the switches, samples and faults one at a
// time, in time order (TimeOrderedRows), and keeps none of them: memory is
// the timeline (72 bytes per section, 64 per wait) plus 8 bytes per section,
// the open sections, per thread state, the rows sharing one timestamp, and
// the results (one HeldLock per holder, lock and site, with its stacks).
// Waiting lost to an off-CPU span is added up when the span closes.
// correlateHolders does the same over vectors in any order.
//
//   LockTimeline timeline = buildLockTimeline(lock_rows);
//   HolderActivity activity = correlateHolders(timeline, switches, samples, faults, {});
//   for (const HeldLock& h : activity.held) print(h.tid, h.preempted_switches, h.off_cpu_ns());
//
//   HolderActivityBuilder builder(timeline, site_of);
//   builder.add(sample); builder.add(switch_row); ...   // in time order
//   HolderActivity activity = builder.finish();
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "analyzer/reports/critical_sections.h"
#include "analyzer/reports/lock_stats.h"
#include "format/event_kinds.h"

namespace incise::analyzer {

// One holder thread holding one lock, taken at one site, over all its sections.
struct HeldLock {
  LockId lock;
  uint64_t tid = 0;
  uint64_t site = 0;           // site_of(acquire stack)
  uint64_t site_stack_id = 0;  // a stack of that site, for naming it
  bool inferred = false;       // some sections were inferred (contended mode)
  uint64_t sections = 0;
  uint64_t sections_switched_out = 0;  // sections with at least one switch-out inside
  uint64_t held_ns = 0;
  uint64_t preempted_switches = 0;
  uint64_t blocked_switches = 0;
  uint64_t off_cpu_preempted_ns = 0;
  uint64_t off_cpu_blocked_ns = 0;
  // Other threads' wait on this lock that overlapped the holder's off-CPU
  // time inside these sections, and how many distinct threads waited then.
  uint64_t waiter_ns_while_off_cpu = 0;
  uint64_t waiters_while_off_cpu = 0;
  // Other threads' wait on this lock that overlapped these sections at all.
  uint64_t waiter_ns_while_held = 0;
  uint64_t samples = 0;
  uint64_t faults = 0;
  std::map<uint64_t, uint64_t> sample_stacks;  // stack id -> samples inside
  std::map<uint64_t, uint64_t> fault_stacks;   // stack id -> faults inside

  uint64_t off_cpu_ns() const { return off_cpu_preempted_ns + off_cpu_blocked_ns; }
};

// Per thread: everything it did, for "x% of T's faults came under lock L".
struct ThreadActivity {
  uint64_t pid = 0;
  uint64_t tid = 0;
  uint64_t samples = 0;
  uint64_t faults = 0;
  uint64_t samples_in_sections = 0;  // inside at least one section
  uint64_t faults_in_sections = 0;
  uint64_t held_ns = 0;  // union of its sections
};

struct HolderActivity {
  std::vector<HeldLock> held;  // by off-CPU time inside sections, then faults, longest first
  std::vector<ThreadActivity> threads;  // by tid
};

class HolderActivityBuilder {
 public:
  // `timeline` must outlive the builder.
  HolderActivityBuilder(const LockTimeline& timeline, const SiteOf& site_of);
  ~HolderActivityBuilder();
  HolderActivityBuilder(const HolderActivityBuilder&) = delete;
  HolderActivityBuilder& operator=(const HolderActivityBuilder&) = delete;

  // Rows of all three kinds merged by time (any order among equal times).
  void add(const format::SchedSwitch& row);
  void add(const format::CpuSample& row);
  void add(const format::PageFault& row);
  HolderActivity finish();

 private:
  class Pass;
  std::unique_ptr<Pass> pass_;
};

HolderActivity correlateHolders(const LockTimeline& timeline,
                                std::span<const format::SchedSwitch> switches,
                                std::span<const format::CpuSample> samples,
                                std::span<const format::PageFault> faults, const SiteOf& site_of);

}  // namespace incise::analyzer
