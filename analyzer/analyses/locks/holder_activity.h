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
// `end` is not, so a section acquired and released at one time counts as a
// section but has nothing inside. Off-CPU time starts only at a switch-out
// seen in the trace.
// Results are grouped per (holder thread, lock, acquire site).
//
// HolderActivityBuilder streams: critical sections and lock waits are added
// as they become known (LockRowStream: `all`-mode sections with their row,
// inferred ones once their wake is settled), the switches, samples and
// faults of every thread in time order. A thread's rows are held back only
// while a section of it may still come that covers them: until time passes
// them and, in contended mode, while it may hold a lock taken after a wait
// (until the lock's next wake) or is the releaser of a wait in progress
// (LockRowStream::pendingSectionStart). Memory: per thread its state and
// its rows held back, the open sections, per lock the waits a section still
// to come or still open may overlap, and the groups: a HeldLock per
// (holder, lock, site), 160 bytes plus 16 per distinct stack inside, and
// 12-16 bytes of index. correlateHolders does the same over vectors in any
// order.
//
// A HolderFocus narrows what is counted, not what is replayed: with a time
// window, sections and waits are cut to it and only samples and faults
// inside it count, but a holder's switch-out before the window still makes
// it off-CPU inside; with threads, every holder and waiter still counts,
// and each group also says how much of the waiting was the focus threads'
// and whether its holder is one of them.
//
//   LockTimeline timeline = buildLockTimeline(lock_rows);
//   HolderActivity activity = correlateHolders(timeline, switches, samples, faults, {});
//   for (const HeldLock& h : activity.held) print(h.tid, h.preempted_switches, h.off_cpu_ns());
//
//   HolderActivityBuilder builder(site_of);
//   LockRowStream locks({.section = [&](auto& s) { builder.addSection(s); },
//                        .wait = [&](auto& w) { builder.addWait(w); }});
//   // whenever time moves on to `now` (every row before it added):
//   locks.settleBefore(now);
//   builder.settle(now, &locks);
//   locks.add(lock_row); builder.add(sample); builder.add(switch_row); ...   // rows at `now`
//   locks.finish();
//   HolderActivity activity = builder.finish();
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/lock_stats.h"
#include "analyzer/analyses/locks/stack_counts.h"
#include "format/event_kinds.h"

namespace incise::analyzer {

// One holder thread holding one lock, taken at one site, over all its sections.
// Counts are 32-bit (a group per critical section on some traces; see above).
struct HeldLock {
  LockId lock;
  uint32_t tid = 0;
  uint32_t sections = 0;
  uint64_t site = 0;           // site_of(acquire stack)
  uint64_t site_stack_id = 0;  // a stack of that site, for naming it
  uint64_t held_ns = 0;
  uint32_t sections_switched_out = 0;  // sections with at least one switch-out inside
  uint32_t preempted_switches = 0;
  uint32_t blocked_switches = 0;
  // How many distinct threads waited on this lock while the holder was
  // off-CPU inside these sections, and how long in all.
  uint32_t waiters_while_off_cpu = 0;
  uint64_t off_cpu_preempted_ns = 0;
  uint64_t off_cpu_blocked_ns = 0;
  uint64_t waiter_ns_while_off_cpu = 0;
  // Other threads' wait on this lock that overlapped these sections at all.
  uint64_t waiter_ns_while_held = 0;
  uint32_t samples = 0;
  uint32_t faults = 0;
  bool inferred = false;  // some sections were inferred (contended mode)
  uint8_t kind = 0;       // format::LockKind of its first section
  // With a focus on some threads: whether the holder is one of them, and
  // the focus threads' part of the two waiting figures (without: true and
  // the figures themselves).
  bool holder_in_focus = false;
  uint64_t focus_waiter_ns_while_off_cpu = 0;
  uint64_t focus_waiter_ns_while_held = 0;
  StackCounts sample_stacks;  // stack id -> samples inside
  StackCounts fault_stacks;   // stack id -> faults inside

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
  // By off-CPU time inside sections, then faults, longest first. A deque:
  // the groups as they were built, not a copy (there may be one per section).
  std::deque<HeldLock> held;
  std::vector<ThreadActivity> threads;  // by tid
  uint64_t holder_switches = 0;         // switches in plus switches out of holders
};

// What a filtered report is about (see above). Times are inclusive, as the
// trace's --time window.
struct HolderFocus {
  std::function<bool(uint64_t pid, uint64_t tid, uint64_t time)> thread;  // empty: every thread
  uint64_t start = 0;
  uint64_t end = UINT64_MAX;

  bool windowed() const { return start != 0 || end != UINT64_MAX; }
  bool covers(uint64_t time) const { return time >= start && time <= end; }
  bool threadIn(uint64_t pid, uint64_t tid, uint64_t time) const {
    return !thread || thread(pid, tid, time);
  }
};

class HolderActivityBuilder {
 public:
  explicit HolderActivityBuilder(SiteOf site_of, HolderFocus focus = {});
  ~HolderActivityBuilder();
  HolderActivityBuilder(const HolderActivityBuilder&) = delete;
  HolderActivityBuilder& operator=(const HolderActivityBuilder&) = delete;

  // A section or wait before any row of its thread at or after its start
  // is settled (see settle).
  void addSection(const CriticalSection& section);
  void addWait(const LockWait& wait);
  // Rows of all three kinds merged by time (any order among equal times).
  void add(const format::SchedSwitch& row);
  void add(const format::CpuSample& row);
  void add(const format::PageFault& row);
  // Every row, section and wait starting before `now` has been added, but
  // the sections `pending` may still hand on (nullptr: none).
  void settle(uint64_t now, const LockRowStream* pending);
  // `idle_groups`: also the groups with no switch-out, sample or fault inside.
  // `site_order`: ranks sites for the order of otherwise equal groups
  // (default: by site id).
  HolderActivity finish(bool idle_groups = true, const SiteOf& site_order = {});

  struct Footprint {
    size_t rows_held_back = 0;
    size_t most_rows_held_back = 0;
    size_t open_sections = 0;
    size_t waits_kept = 0;
    size_t groups = 0;
    // Steps taken measuring sections and off-CPU spans against the waits
    // (holder_activity_waits.h): linear in the rows, whatever the locks.
    uint64_t wait_work = 0;
    // Entries read and moved counting the stacks inside sections
    // (stack_counts.h): n log n in the samples and faults inside, however
    // many distinct stacks one group sees.
    uint64_t stack_work = 0;
  };
  Footprint footprint() const;

 private:
  class Pass;
  std::unique_ptr<Pass> pass_;
};

HolderActivity correlateHolders(const LockTimeline& timeline,
                                std::span<const format::SchedSwitch> switches,
                                std::span<const format::CpuSample> samples,
                                std::span<const format::PageFault> faults, const SiteOf& site_of);

}  // namespace incise::analyzer
