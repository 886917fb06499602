#include "analyzer/reports/holder_activity.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

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

struct Event {
  uint64_t tid;
  uint64_t time;
  EventType type;
  uint32_t index;  // the section, or the row's arrival order among equal times
  uint64_t pid = 0;
  uint64_t value = 0;  // a sample's or fault's stack id, a switch-out's prev_state
};

bool before(const Event& a, const Event& b) {
  return std::tie(a.time, a.tid, a.type, a.index) < std::tie(b.time, b.tid, b.type, b.index);
}

uint64_t overlap(uint64_t a_start, uint64_t a_end, uint64_t b_start, uint64_t b_end) {
  uint64_t start = std::max(a_start, b_start);
  uint64_t end = std::min(a_end, b_end);
  return end > start ? end - start : 0;
}

// The key of HolderActivity::held entries.
using HeldKey = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>;  // tid, pid, address, site

}  // namespace

class HolderActivityBuilder::Pass {
 public:
  Pass(const LockTimeline& timeline, const SiteOf& site_of)
      : timeline_(timeline), switched_out_(timeline.sections.size()) {
    // Groups first, then held_ at its final size: no vector doubling (there
    // may be a group per section).
    held_of_section_.reserve(timeline.sections.size());
    std::vector<uint64_t> site_of_section;
    site_of_section.reserve(timeline.sections.size());
    {
      std::map<HeldKey, uint32_t> index_of_held;
      for (const CriticalSection& s : timeline.sections) {
        uint64_t site = site_of ? site_of(s.stack_id) : s.stack_id;
        HeldKey key{s.tid, s.lock.pid, s.lock.address, site};
        auto it = index_of_held.try_emplace(key, static_cast<uint32_t>(index_of_held.size())).first;
        held_of_section_.push_back(it->second);
        site_of_section.push_back(site);
      }
      held_.resize(index_of_held.size());
    }
    for (size_t i = 0; i < timeline.sections.size(); ++i) {
      const CriticalSection& s = timeline.sections[i];
      HeldLock& h = held_[held_of_section_[i]];
      if (h.sections == 0) {
        h.lock = s.lock;
        h.tid = s.tid;
        h.site = site_of_section[i];
        h.site_stack_id = s.stack_id;
      }
      if (h.site_stack_id == 0) h.site_stack_id = s.stack_id;
      h.inferred |= s.inferred;
      ++h.sections;
      h.held_ns += s.duration();
    }
    for (size_t i = 0; i < timeline.waits.size(); ++i) {
      auto [it, fresh] = waits_of_lock_.try_emplace(timeline.waits[i].lock, WaitRange{i, i, 0});
      it->second.last = i + 1;
      it->second.longest = std::max(it->second.longest, timeline.waits[i].duration());
    }
    by_start_.resize(timeline.sections.size());
    std::iota(by_start_.begin(), by_start_.end(), 0);
    std::stable_sort(by_start_.begin(), by_start_.end(), [&](uint32_t a, uint32_t b) {
      return timeline.sections[a].start < timeline.sections[b].start;
    });
    for (const CriticalSection& s : timeline.sections) holders_.insert(s.tid);
  }

  // Events at one time are applied together, sorted, once the time has passed.
  void add(const Event& event) {
    if (!pending_.empty() && event.time != pending_.front().time) flush();
    pending_.push_back(event);
    pending_.back().index = static_cast<uint32_t>(pending_.size());
  }
  void addSwitch(const format::SchedSwitch& sw) {
    if (holders_.count(sw.prev_tid))
      add({sw.prev_tid, sw.time, EventType::kSwitchOut, 0, sw.prev_pid, sw.prev_state});
    if (holders_.count(sw.next_tid))
      add({sw.next_tid, sw.time, EventType::kSwitchIn, 0, sw.next_pid, 0});
  }

  uint64_t nextSectionTime() const {
    uint64_t t = ends_.empty() ? UINT64_MAX : ends_.top().first;
    if (next_start_ < by_start_.size())
      t = std::min(t, timeline_.sections[by_start_[next_start_]].start);
    return t;
  }

  // Moves the section starts and ends at `t` to `out` (a section may end
  // where it starts).
  void takeSectionEventsAt(uint64_t t, std::vector<Event>& out) {
    for (; next_start_ < by_start_.size() && timeline_.sections[by_start_[next_start_]].start == t;
         ++next_start_) {
      uint32_t i = by_start_[next_start_];
      const CriticalSection& s = timeline_.sections[i];
      out.push_back({s.tid, s.start, EventType::kSectionStart, i});
      ends_.push({s.end, i});
    }
    for (; !ends_.empty() && ends_.top().first == t; ends_.pop()) {
      uint32_t i = ends_.top().second;
      out.push_back({timeline_.sections[i].tid, t, EventType::kSectionEnd, i});
    }
  }

  // Applies the section events before the pending rows' time, then those
  // rows with the section events at their time, in per-thread order. With
  // nothing pending, every section event left.
  void flush() {
    uint64_t now = pending_.empty() ? UINT64_MAX : pending_.front().time;
    std::vector<Event> group;
    for (uint64_t t; (t = nextSectionTime()) < now;) {
      group.clear();
      takeSectionEventsAt(t, group);
      std::sort(group.begin(), group.end(), before);
      for (const Event& e : group) apply(e);
    }
    if (nextSectionTime() == now) takeSectionEventsAt(now, pending_);
    std::sort(pending_.begin(), pending_.end(), before);
    for (const Event& e : pending_) apply(e);
    pending_.clear();
  }

  // Other threads' waits on the same lock that overlapped each section.
  // Waits are sorted by (lock, start); a wait overlapping [start, end)
  // starts at or after start - (longest wait on that lock).
  void addWaiterOverlap() {
    for (size_t i = 0; i < timeline_.sections.size(); ++i) {
      const CriticalSection& s = timeline_.sections[i];
      HeldLock& h = held_[held_of_section_[i]];
      forEachOverlappingWait(s, s.start, s.end, [&](const LockWait& w) {
        h.waiter_ns_while_held += overlap(s.start, s.end, w.start, w.end);
      });
    }
    for (auto& [held, waiters] : waiters_off_cpu_)
      held_[held].waiters_while_off_cpu = waiters.size();
  }

  HolderActivity finish() {
    HolderActivity result;
    result.held = std::move(held_);
    std::sort(result.held.begin(), result.held.end(), [](const HeldLock& a, const HeldLock& b) {
      return std::make_tuple(b.off_cpu_ns(), b.faults, b.waiter_ns_while_held, a.tid, a.lock,
                             a.site) < std::make_tuple(a.off_cpu_ns(), a.faults,
                                                       a.waiter_ns_while_held, b.tid, b.lock,
                                                       b.site);
    });
    for (auto& [tid, thread] : threads_) result.threads.push_back(thread.activity);
    std::sort(result.threads.begin(), result.threads.end(),
              [](const ThreadActivity& a, const ThreadActivity& b) { return a.tid < b.tid; });
    return result;
  }

 private:
  // One thread's state between its events.
  struct Thread {
    ThreadActivity activity;
    std::vector<uint32_t> active;  // sections it is inside
    bool off_cpu = false;
    bool preempted = false;
    uint64_t off_since = 0;
    uint64_t union_start = 0;
  };

  void closeOffSpan(Thread& t, uint32_t section, uint64_t now) {
    const CriticalSection& s = timeline_.sections[section];
    uint64_t start = std::max(t.off_since, s.start);
    if (now <= start) return;
    HeldLock& h = held_[held_of_section_[section]];
    (t.preempted ? h.off_cpu_preempted_ns : h.off_cpu_blocked_ns) += now - start;
    // Other threads' waiting on the lock lost while the holder was off-CPU.
    forEachOverlappingWait(s, start, now, [&](const LockWait& w) {
      uint64_t lost = overlap(start, now, w.start, w.end);
      h.waiter_ns_while_off_cpu += lost;
      if (lost > 0) waiters_off_cpu_[held_of_section_[section]].insert(w.tid);
    });
  }

  // Other threads' waits on section `s`'s lock that start before `end` and
  // may overlap [start, end).
  template <typename Visit>
  void forEachOverlappingWait(const CriticalSection& s, uint64_t start, uint64_t end,
                              Visit&& visit) const {
    auto range = waits_of_lock_.find(s.lock);
    if (range == waits_of_lock_.end()) return;
    const std::vector<LockWait>& waits = timeline_.waits;
    const WaitRange& r = range->second;
    uint64_t earliest = start > r.longest ? start - r.longest : 0;
    auto first = std::partition_point(waits.begin() + r.first, waits.begin() + r.last,
                                      [&](const LockWait& w) { return w.start < earliest; });
    for (auto w = first; w != waits.begin() + r.last && w->start < end; ++w) {
      if (w->tid != s.tid) visit(*w);
    }
  }

  void countInside(Thread& t, uint64_t stack_id, bool fault) {
    if (t.active.empty()) return;
    ++(fault ? t.activity.faults_in_sections : t.activity.samples_in_sections);
    for (uint32_t section : t.active) {
      HeldLock& h = held_[held_of_section_[section]];
      ++(fault ? h.faults : h.samples);
      ++(fault ? h.fault_stacks : h.sample_stacks)[stack_id];
    }
  }

  void apply(const Event& e) {
    auto [it, fresh] = threads_.try_emplace(e.tid);
    Thread& t = it->second;
    if (fresh) t.activity.tid = e.tid;
    switch (e.type) {
      case EventType::kSectionStart:
        if (t.active.empty()) t.union_start = e.time;
        t.active.push_back(e.index);
        t.activity.pid = timeline_.sections[e.index].lock.pid;
        break;
      case EventType::kSectionEnd:
        if (t.off_cpu) closeOffSpan(t, e.index, e.time);
        std::erase(t.active, e.index);
        if (t.active.empty()) t.activity.held_ns += e.time - t.union_start;
        break;
      case EventType::kSwitchOut: {
        for (uint32_t section : t.active) {
          HeldLock& h = held_[held_of_section_[section]];
          if (!switched_out_[section]) ++h.sections_switched_out;
          switched_out_[section] = true;
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
          for (uint32_t section : t.active) closeOffSpan(t, section, e.time);
        }
        t.off_cpu = false;
        break;
      case EventType::kSample:
        ++t.activity.samples;
        t.activity.pid = e.pid;
        countInside(t, e.value, false);
        break;
      case EventType::kFault:
        ++t.activity.faults;
        t.activity.pid = e.pid;
        countInside(t, e.value, true);
        break;
    }
  }

  const LockTimeline& timeline_;
  std::vector<HeldLock> held_;
  std::vector<uint32_t> held_of_section_;
  // Per lock: its waits in timeline_.waits and the longest of them.
  struct WaitRange {
    size_t first = 0;
    size_t last = 0;
    uint64_t longest = 0;
  };
  std::map<LockId, WaitRange> waits_of_lock_;
  std::unordered_map<uint32_t, std::set<uint64_t>> waiters_off_cpu_;  // per held_ entry
  std::vector<bool> switched_out_;                                    // per section
  std::unordered_set<uint64_t> holders_;
  // Section events come from the sections by start, and from a heap of the
  // ends of started sections (as many as are open at once).
  std::vector<uint32_t> by_start_;
  size_t next_start_ = 0;
  using End = std::pair<uint64_t, uint32_t>;  // end, section
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends_;
  std::vector<Event> pending_;  // rows at one time, not applied yet
  std::unordered_map<uint64_t, Thread> threads_;
};

HolderActivityBuilder::HolderActivityBuilder(const LockTimeline& timeline, const SiteOf& site_of)
    : pass_(std::make_unique<Pass>(timeline, site_of)) {}

HolderActivityBuilder::~HolderActivityBuilder() = default;

void HolderActivityBuilder::add(const format::SchedSwitch& row) {
  pass_->addSwitch(row);
}

void HolderActivityBuilder::add(const format::CpuSample& row) {
  pass_->add({row.tid, row.time, EventType::kSample, 0, row.pid, row.stack_id});
}

void HolderActivityBuilder::add(const format::PageFault& row) {
  pass_->add({row.tid, row.time, EventType::kFault, 0, row.pid, row.stack_id});
}

HolderActivity HolderActivityBuilder::finish() {
  pass_->flush();  // the rows at the last time
  pass_->flush();  // the sections after them
  pass_->addWaiterOverlap();
  return pass_->finish();
}

HolderActivity correlateHolders(const LockTimeline& timeline,
                                std::span<const format::SchedSwitch> switches,
                                std::span<const format::CpuSample> samples,
                                std::span<const format::PageFault> faults, const SiteOf& site_of) {
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
  HolderActivityBuilder builder(timeline, site_of);
  for (const Row& row : rows) {
    if (row.kind == 0) builder.add(switches[row.index]);
    if (row.kind == 1) builder.add(samples[row.index]);
    if (row.kind == 2) builder.add(faults[row.index]);
  }
  return builder.finish();
}

}  // namespace incise::analyzer
