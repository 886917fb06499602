#include "analyzer/analyses/locks/holder_activity.h"

#include <algorithm>
#include <deque>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analyzer/analyses/locks/holder_activity_waits.h"

namespace incise::analyzer {
namespace {

// Order of events at one timestamp: a section that ends at t does not
// contain t, one that starts at t does; a switch-out at t is inside a
// section that started at t.
enum class EventType : uint8_t {
  kSectionEnd = 0,
  kSectionStart = 1,
  kSwitchIn = 2,
  kSample = 3,
  kFault = 4,
  kSwitchOut = 5,
};

// A switch, sample or fault of one thread, held back until settled.
struct Row {
  uint64_t time;
  EventType type;
  uint64_t pid;
  uint64_t value;  // a sample's or fault's stack id, a switch-out's prev_state
};

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

struct LockIdHash {
  size_t operator()(const LockId& lock) const { return mix(lock.pid, lock.address); }
};

using Ends = std::vector<std::pair<uint64_t, uint32_t>>;  // a min-heap of (time, section)
void pushEvent(Ends& heap, uint64_t time, uint32_t section) {
  heap.emplace_back(time, section);
  std::push_heap(heap.begin(), heap.end(), std::greater<>{});
}
uint32_t popEvent(Ends& heap) {
  std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
  uint32_t section = heap.back().second;
  heap.pop_back();
  return section;
}

}  // namespace

class HolderActivityBuilder::Pass {
 public:
  Pass(SiteOf site_of, HolderFocus focus)
      : site_of_(std::move(site_of)), focus_(std::move(focus)) {}

  void addSection(const CriticalSection& in) {
    CriticalSection s = in;
    if (focus_.windowed()) {  // cut to the window; one outside it is not counted at all
      if (s.start > focus_.end || s.end < focus_.start) return;
      s.start = std::max(s.start, focus_.start);
      s.end = std::max(s.start, std::min(s.end, windowEnd()));
    }
    uint64_t site = site_of_ ? site_of_(s.stack_id) : s.stack_id;
    uint32_t g = groupOf(s.tid, s.lock, site);
    HeldLock& h = groups_[g];
    // The stack of the group's earliest section with one.
    if (s.stack_id != 0 && (h.site_stack_id == 0 || s.start < site_stack_starts_[g])) {
      h.site_stack_id = s.stack_id;
      site_stack_starts_[g] = s.start;
    }
    if (h.sections == 0) h.kind = static_cast<uint8_t>(s.kind);
    h.inferred |= s.inferred;
    h.holder_in_focus = h.holder_in_focus || focus_.threadIn(s.lock.pid, s.tid, s.start);
    ++h.sections;
    h.held_ns += s.duration();

    uint32_t index;
    if (free_.empty()) {
      index = static_cast<uint32_t>(sections_.size());
      sections_.emplace_back();
    } else {
      index = free_.back();
      free_.pop_back();
    }
    sections_[index] = {s.lock, s.tid, s.start, s.end, g, false};
    ++open_sections_;
    waitsOf(s.lock).live_starts.insert(s.start);
    Thread& t = thread(s.tid);
    t.holder = true;
    pushEvent(t.to_start, s.start, index);
    touch(s.tid, t);
  }

  void addWait(const LockWait& w) {
    LockWaitIndex& waits = waitsOf(w.lock).waits;
    size_t before = waits.size();
    waits.add({.start = std::max(w.start, focus_.start),
               .end = std::min(w.end, windowEnd()),
               .tid = w.tid,
               .focus = focus_.threadIn(w.lock.pid, w.tid, w.start)});
    waits_kept_ += waits.size() - before;
  }

  void addRow(uint64_t tid, const Row& row) {
    Thread& t = thread(tid);
    t.rows.push_back(row);
    if ((row.type == EventType::kSwitchIn || row.type == EventType::kSwitchOut) &&
        focus_.covers(row.time)) {
      ++t.switches;
    }
    most_rows_held_back_ = std::max(most_rows_held_back_, ++rows_held_back_);
    touch(tid, t);
  }

  void settle(uint64_t now, const LockRowStream* pending) {
    for (uint64_t tid : touched_) {
      Thread& t = threads_[tid];
      t.touched = false;
      replay(t, horizon(tid, now, pending));
    }
    touched_.clear();
    if (++settles_ % kSweepEvery != 0 && now != UINT64_MAX) return;
    for (auto& [tid, t] : threads_) replay(t, horizon(tid, now, pending));
    pruneWaits(now, pending);
  }

  HolderActivity finish(bool idle_groups, const SiteOf& site_order) {
    HolderActivity result;
    slots_ = {};
    site_stack_starts_ = {};
    result.held = std::move(groups_);
    if (!idle_groups) {
      std::erase_if(result.held, [](const HeldLock& h) {
        return h.preempted_switches + h.blocked_switches + h.samples + h.faults + h.off_cpu_ns() +
                   h.waiter_ns_while_off_cpu ==
               0;
      });
    }
    // Most off-CPU time, faults, waiting while held first; then by holder,
    // lock and site (ranked only between otherwise equal groups).
    std::sort(result.held.begin(), result.held.end(), [&](const HeldLock& a, const HeldLock& b) {
      auto weight = [](const HeldLock& h) {
        return std::make_tuple(h.off_cpu_ns(), h.faults, h.waiter_ns_while_held);
      };
      if (weight(a) != weight(b)) return weight(a) > weight(b);
      if (std::tie(a.tid, a.lock) != std::tie(b.tid, b.lock))
        return std::tie(a.tid, a.lock) < std::tie(b.tid, b.lock);
      return site_order ? site_order(a.site) < site_order(b.site) : a.site < b.site;
    });
    if (!focus_.thread) {
      for (HeldLock& h : result.held) {
        h.holder_in_focus = true;
        h.focus_waiter_ns_while_held = h.waiter_ns_while_held;
        h.focus_waiter_ns_while_off_cpu = h.waiter_ns_while_off_cpu;
      }
    }
    for (auto& [tid, thread] : threads_) {
      if (!thread.holder) continue;
      result.threads.push_back(thread.activity);
      result.holder_switches += thread.switches;
    }
    std::sort(result.threads.begin(), result.threads.end(),
              [](const ThreadActivity& a, const ThreadActivity& b) { return a.tid < b.tid; });
    return result;
  }

  Footprint footprint() const {
    return {.rows_held_back = rows_held_back_,
            .most_rows_held_back = most_rows_held_back_,
            .open_sections = open_sections_,
            .waits_kept = waits_kept_,
            .groups = groups_.size(),
            .wait_work = wait_work_,
            .stack_work = stack_work_};
  }

 private:
  static constexpr uint64_t kSweepEvery = 1 << 16;

  struct Section {
    LockId lock;
    uint64_t tid = 0;
    uint64_t start = 0;
    uint64_t end = 0;
    uint32_t group = 0;
    bool switched_out = false;
  };
  // Per lock: the waits a section may still overlap, and the starts of the
  // sections added and not yet ended.
  struct LockWaits {
    LockWaits(uint64_t* work, bool track_focus) : waits(work, track_focus) {}
    LockWaitIndex waits;
    std::multiset<uint64_t> live_starts;
  };
  // Per group with waiting lost while its holder was off-CPU: who waited,
  // and the latest start and end of its off-CPU spans measured so far.
  struct OffCpuWaiters {
    std::set<uint64_t> tids;
    uint64_t latest_start = 0;
    uint64_t latest_end = 0;
  };
  // One thread's state between its events, and what is not applied yet.
  struct Thread {
    ThreadActivity activity;
    bool holder = false;
    bool touched = false;
    std::vector<uint32_t> active;  // sections it is inside
    bool off_cpu = false;
    bool preempted = false;
    uint64_t off_since = 0;
    uint64_t union_start = 0;
    uint64_t switches = 0;
    std::deque<Row> rows;  // time order
    Ends to_start;         // added sections, by start
    Ends to_end;           // started sections, by end
  };

  Thread& thread(uint64_t tid) {
    auto [it, fresh] = threads_.try_emplace(tid);
    if (fresh) it->second.activity.tid = tid;
    return it->second;
  }
  void touch(uint64_t tid, Thread& t) {
    if (!t.touched) touched_.push_back(tid);
    t.touched = true;
  }
  LockWaits& waitsOf(const LockId& lock) {
    return waits_of_lock_.try_emplace(lock, &wait_work_, bool(focus_.thread)).first->second;
  }
  // The window's end as the end of a half-open interval.
  uint64_t windowEnd() const { return focus_.end == UINT64_MAX ? UINT64_MAX : focus_.end + 1; }

  static uint64_t horizon(uint64_t tid, uint64_t now, const LockRowStream* pending) {
    return pending ? std::min(now, pending->pendingSectionStart(tid)) : now;
  }

  // Open addressing over groups_ (a map node per group would cost as much
  // as the group on traces with a group per section).
  uint32_t groupOf(uint64_t tid, const LockId& lock, uint64_t site) {
    if (groups_.size() * 2 >= slots_.size()) {
      std::vector<uint32_t> slots(std::max<size_t>(1024, slots_.size() * 2), 0);
      for (uint32_t g = 0; g < groups_.size(); ++g) {
        const HeldLock& h = groups_[g];
        size_t i = hashOf(h.tid, h.lock, h.site) & (slots.size() - 1);
        while (slots[i] != 0) i = (i + 1) & (slots.size() - 1);
        slots[i] = g + 1;
      }
      slots_ = std::move(slots);
    }
    size_t i = hashOf(tid, lock, site) & (slots_.size() - 1);
    for (; slots_[i] != 0; i = (i + 1) & (slots_.size() - 1)) {
      const HeldLock& h = groups_[slots_[i] - 1];
      if (h.tid == tid && h.lock == lock && h.site == site) return slots_[i] - 1;
    }
    groups_.push_back({.lock = lock, .tid = static_cast<uint32_t>(tid), .site = site});
    site_stack_starts_.push_back(0);
    slots_[i] = static_cast<uint32_t>(groups_.size());
    return static_cast<uint32_t>(groups_.size() - 1);
  }
  static size_t hashOf(uint64_t tid, const LockId& lock, uint64_t site) {
    uint64_t h = mix(mix(mix(tid, lock.pid), lock.address), site);
    return h * 0x9e3779b97f4a7c15ULL >> 17;
  }

  // Applies the thread's section events and rows before `until`, in time
  // order, at one time in EventType order (rows of one type in arrival order).
  void replay(Thread& t, uint64_t until) {
    std::vector<Row>& rows_now = rows_now_;
    std::vector<uint32_t>& starting = starting_;
    for (;;) {
      uint64_t time = UINT64_MAX;
      if (!t.rows.empty()) time = t.rows.front().time;
      if (!t.to_start.empty()) time = std::min(time, t.to_start.front().first);
      if (!t.to_end.empty()) time = std::min(time, t.to_end.front().first);
      if (time >= until) return;
      starting.clear();
      while (!t.to_start.empty() && t.to_start.front().first == time)
        starting.push_back(popEvent(t.to_start));
      while (!t.to_end.empty() && t.to_end.front().first == time)
        endSection(t, popEvent(t.to_end), time);
      for (uint32_t s : starting) {
        t.activity.pid = sections_[s].lock.pid;
        // [time, time) holds nothing: it counts as a section (addSection)
        // but is never entered, or every later row of the thread would be
        // charged to it.
        if (sections_[s].end == time) {
          retireSection(s);
          continue;
        }
        if (t.active.empty()) t.union_start = time;
        t.active.push_back(s);
        pushEvent(t.to_end, sections_[s].end, s);
      }
      rows_now.clear();
      while (!t.rows.empty() && t.rows.front().time == time) {
        rows_now.push_back(t.rows.front());
        t.rows.pop_front();
        --rows_held_back_;
      }
      std::stable_sort(rows_now.begin(), rows_now.end(),
                       [](const Row& a, const Row& b) { return a.type < b.type; });
      for (const Row& row : rows_now) apply(t, row);
    }
  }

  void endSection(Thread& t, uint32_t s, uint64_t time) {
    if (t.off_cpu) closeOffSpan(t, s, time);
    std::erase(t.active, s);
    if (t.active.empty()) t.activity.held_ns += time - t.union_start;
    retireSection(s);
  }

  // A section is over: what other threads' waits on its lock overlapped it,
  // and its slot and its hold on those waits go.
  void retireSection(uint32_t s) {
    const Section& section = sections_[s];
    LockWaits& lock = waitsOf(section.lock);
    HeldLock& h = groups_[section.group];
    h.waiter_ns_while_held += lock.waits.waitedDuring(section.start, section.end, section.tid);
    if (focus_.thread) {
      h.focus_waiter_ns_while_held +=
          lock.waits.waitedDuring(section.start, section.end, section.tid, /*focus_only=*/true);
    }
    lock.live_starts.erase(lock.live_starts.find(section.start));
    free_.push_back(s);
    --open_sections_;
  }

  void closeOffSpan(Thread& t, uint32_t s, uint64_t now) {
    const Section& section = sections_[s];
    uint64_t start = std::max(t.off_since, section.start);
    if (now <= start) return;
    HeldLock& h = groups_[section.group];
    (t.preempted ? h.off_cpu_preempted_ns : h.off_cpu_blocked_ns) += now - start;
    // Other threads' waiting on the lock lost while the holder was off-CPU.
    LockWaitIndex& waits = waitsOf(section.lock).waits;
    uint64_t lost = waits.waitedDuring(start, now, section.tid);
    h.waiter_ns_while_off_cpu += lost;
    if (focus_.thread) {
      h.focus_waiter_ns_while_off_cpu += waits.waitedDuring(start, now, section.tid, true);
    }
    auto found = waiters_off_cpu_.find(section.group);
    if (lost == 0 && found == waiters_off_cpu_.end()) return;
    OffCpuWaiters& waiters =
        found != waiters_off_cpu_.end() ? found->second : waiters_off_cpu_[section.group];
    // A wait that started before an earlier span ended and overlaps this
    // one, starting no earlier, overlapped that span too: its thread is
    // counted. So only waits since then are looked at (all of them when
    // spans come out of order: nested sections of one group).
    uint64_t since = start >= waiters.latest_start ? waiters.latest_end : 0;
    if (lost > 0) {
      waits.forEachWaiter(start, now, since, section.tid,
                          [&](uint64_t tid) { waiters.tids.insert(tid); });
      h.waiters_while_off_cpu = static_cast<uint32_t>(waiters.tids.size());
    }
    waiters.latest_start = std::max(waiters.latest_start, start);
    waiters.latest_end = std::max(waiters.latest_end, now);
  }

  void countInside(Thread& t, uint64_t stack_id, bool fault) {
    if (t.active.empty()) return;
    ++(fault ? t.activity.faults_in_sections : t.activity.samples_in_sections);
    for (uint32_t s : t.active) {
      HeldLock& h = groups_[sections_[s].group];
      ++(fault ? h.faults : h.samples);
      (fault ? h.fault_stacks : h.sample_stacks).add(stack_id, stack_work_);
    }
  }

  void apply(Thread& t, const Row& e) {
    switch (e.type) {
      case EventType::kSwitchOut: {
        for (uint32_t s : t.active) {
          HeldLock& h = groups_[sections_[s].group];
          if (!sections_[s].switched_out) ++h.sections_switched_out;
          sections_[s].switched_out = true;
          ++(e.value == 0 ? h.preempted_switches : h.blocked_switches);
        }
        // A second switch-out without a switch-in between: an event was
        // lost; the earlier off-CPU period ends here, unmeasured.
        t.off_cpu = true;
        t.preempted = e.value == 0;
        t.off_since = e.time;
        break;
      }
      case EventType::kSwitchIn:
        if (t.off_cpu) {
          for (uint32_t s : t.active) closeOffSpan(t, s, e.time);
        }
        t.off_cpu = false;
        break;
      case EventType::kSample:
        if (!focus_.covers(e.time)) break;
        ++t.activity.samples;
        t.activity.pid = e.pid;
        countInside(t, e.value, false);
        break;
      case EventType::kFault:
        if (!focus_.covers(e.time)) break;
        ++t.activity.faults;
        t.activity.pid = e.pid;
        countInside(t, e.value, true);
        break;
      case EventType::kSectionStart:
      case EventType::kSectionEnd:
        break;
    }
  }

  // A wait matters while a section that may overlap it is open or may still
  // come: one that started before the wait ended.
  void pruneWaits(uint64_t now, const LockRowStream* pending) {
    for (auto it = waits_of_lock_.begin(); it != waits_of_lock_.end();) {
      LockWaits& lock = it->second;
      uint64_t bound = now;
      if (pending) bound = std::min(bound, pending->pendingSectionStart(it->first));
      if (!lock.live_starts.empty()) bound = std::min(bound, *lock.live_starts.begin());
      waits_kept_ -= lock.waits.size();
      lock.waits.prune(bound);
      waits_kept_ += lock.waits.size();
      it =
          lock.waits.empty() && lock.live_starts.empty() ? waits_of_lock_.erase(it) : std::next(it);
    }
  }

  SiteOf site_of_;
  HolderFocus focus_;
  // Per (holder, lock, site); a deque, so growing never copies them all.
  std::deque<HeldLock> groups_;
  std::deque<uint64_t> site_stack_starts_;  // per group: the start of its site_stack_id's section
  std::vector<uint32_t> slots_;             // groups_ index + 1; 0 = free
  std::unordered_map<uint32_t, OffCpuWaiters> waiters_off_cpu_;  // per group
  std::vector<Section> sections_;                                // open ones, by slot
  std::vector<uint32_t> free_;                                   // slots of ended ones
  std::unordered_map<LockId, LockWaits, LockIdHash> waits_of_lock_;
  std::unordered_map<uint64_t, Thread> threads_;
  std::vector<Row> rows_now_;       // replay's scratch: a thread's rows at one time
  std::vector<uint32_t> starting_;  // and its sections starting then
  std::vector<uint64_t> touched_;   // threads with rows or sections added since the last settle
  uint64_t settles_ = 0;
  size_t rows_held_back_ = 0;
  size_t most_rows_held_back_ = 0;
  size_t open_sections_ = 0;
  size_t waits_kept_ = 0;
  uint64_t wait_work_ = 0;
  uint64_t stack_work_ = 0;
};

HolderActivityBuilder::HolderActivityBuilder(SiteOf site_of, HolderFocus focus)
    : pass_(std::make_unique<Pass>(std::move(site_of), std::move(focus))) {}

HolderActivityBuilder::~HolderActivityBuilder() = default;

void HolderActivityBuilder::addSection(const CriticalSection& section) {
  pass_->addSection(section);
}

void HolderActivityBuilder::addWait(const LockWait& wait) {
  pass_->addWait(wait);
}

void HolderActivityBuilder::add(const format::SchedSwitch& sw) {
  // A half of a summarised short sleep is not a switch: the holder runs through it.
  if ((sw.elided & format::switch_elided::kPrevOut) == 0)
    pass_->addRow(sw.prev_tid, {sw.time, EventType::kSwitchOut, sw.prev_pid, sw.prev_state});
  if ((sw.elided & format::switch_elided::kNextIn) == 0)
    pass_->addRow(sw.next_tid, {sw.time, EventType::kSwitchIn, sw.next_pid, 0});
}

void HolderActivityBuilder::add(const format::CpuSample& row) {
  pass_->addRow(row.tid, {row.time, EventType::kSample, row.pid, row.stack_id});
}

void HolderActivityBuilder::add(const format::PageFault& row) {
  pass_->addRow(row.tid, {row.time, EventType::kFault, row.pid, row.stack_id});
}

void HolderActivityBuilder::settle(uint64_t now, const LockRowStream* pending) {
  pass_->settle(now, pending);
}

HolderActivity HolderActivityBuilder::finish(bool idle_groups, const SiteOf& site_order) {
  pass_->settle(UINT64_MAX, nullptr);
  return pass_->finish(idle_groups, site_order);
}

HolderActivityBuilder::Footprint HolderActivityBuilder::footprint() const {
  return pass_->footprint();
}

HolderActivity correlateHolders(const LockTimeline& timeline,
                                std::span<const format::SchedSwitch> switches,
                                std::span<const format::CpuSample> samples,
                                std::span<const format::PageFault> faults, const SiteOf& site_of) {
  HolderActivityBuilder builder(site_of);
  for (const CriticalSection& s : timeline.sections) builder.addSection(s);
  for (const LockWait& w : timeline.waits) builder.addWait(w);
  // The rows by time; among equal times, each kind in its vector's order.
  struct Row {
    uint64_t time;
    uint8_t kind;
    uint32_t index;
  };
  std::vector<Row> rows;
  for (uint32_t i = 0; i < switches.size(); ++i) rows.push_back({switches[i].time, 0, i});
  for (uint32_t i = 0; i < samples.size(); ++i) rows.push_back({samples[i].time, 1, i});
  for (uint32_t i = 0; i < faults.size(); ++i) rows.push_back({faults[i].time, 2, i});
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.time < b.time; });
  for (const Row& row : rows) {
    if (row.kind == 0) builder.add(switches[row.index]);
    if (row.kind == 1) builder.add(samples[row.index]);
    if (row.kind == 2) builder.add(faults[row.index]);
  }
  return builder.finish();
}

}  // namespace incise::analyzer
