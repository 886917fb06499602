#include "analyzer/reports/holder_activity.h"

#include <algorithm>
#include <set>
#include <tuple>
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
  uint32_t index;  // into the sections, switches, samples or faults
};

struct Span {
  uint64_t start;
  uint64_t end;
};

uint64_t overlap(uint64_t a_start, uint64_t a_end, uint64_t b_start, uint64_t b_end) {
  uint64_t start = std::max(a_start, b_start);
  uint64_t end = std::min(a_end, b_end);
  return end > start ? end - start : 0;
}

std::vector<Event> mergeEvents(const LockTimeline& timeline,
                               std::span<const format::SchedSwitch> switches,
                               std::span<const format::CpuSample> samples,
                               std::span<const format::PageFault> faults) {
  std::vector<Event> events;
  std::unordered_set<uint64_t> holders;
  for (uint32_t i = 0; i < timeline.sections.size(); ++i) {
    const CriticalSection& s = timeline.sections[i];
    holders.insert(s.tid);
    events.push_back({s.tid, s.start, EventType::kSectionStart, i});
    events.push_back({s.tid, s.end, EventType::kSectionEnd, i});
  }
  for (uint32_t i = 0; i < switches.size(); ++i) {
    const format::SchedSwitch& sw = switches[i];
    if (holders.count(sw.prev_tid))
      events.push_back({sw.prev_tid, sw.time, EventType::kSwitchOut, i});
    if (holders.count(sw.next_tid))
      events.push_back({sw.next_tid, sw.time, EventType::kSwitchIn, i});
  }
  for (uint32_t i = 0; i < samples.size(); ++i) {
    events.push_back({samples[i].tid, samples[i].time, EventType::kSample, i});
  }
  for (uint32_t i = 0; i < faults.size(); ++i) {
    events.push_back({faults[i].tid, faults[i].time, EventType::kFault, i});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.tid, a.time, a.type, a.index) < std::tie(b.tid, b.time, b.type, b.index);
  });
  return events;
}

// The key of HolderActivity::held entries.
using HeldKey = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>;  // tid, pid, address, site

class HolderPass {
 public:
  HolderPass(const LockTimeline& timeline, const SiteOf& site_of)
      : timeline_(timeline),
        off_spans_(timeline.sections.size()),
        switched_out_(timeline.sections.size()) {
    held_of_section_.reserve(timeline.sections.size());
    for (const CriticalSection& s : timeline.sections) {
      uint64_t site = site_of ? site_of(s.stack_id) : s.stack_id;
      HeldKey key{s.tid, s.lock.pid, s.lock.address, site};
      auto [it, fresh] = index_of_held_.try_emplace(key, held_.size());
      if (fresh) {
        held_.push_back({.lock = s.lock, .tid = s.tid, .site = site, .site_stack_id = s.stack_id});
      }
      HeldLock& h = held_[it->second];
      if (h.site_stack_id == 0) h.site_stack_id = s.stack_id;
      h.inferred |= s.inferred;
      ++h.sections;
      h.held_ns += s.duration();
      held_of_section_.push_back(it->second);
    }
  }

  void run(std::span<const Event> events, std::span<const format::SchedSwitch> switches,
           std::span<const format::CpuSample> samples, std::span<const format::PageFault> faults) {
    size_t begin = 0;
    while (begin < events.size()) {
      size_t end = begin;
      while (end < events.size() && events[end].tid == events[begin].tid) ++end;
      runThread(events.subspan(begin, end - begin), switches, samples, faults);
      begin = end;
    }
  }

  // Other threads' waits on the same lock against each section and its
  // off-CPU spans. Waits are sorted by (lock, start); a wait overlapping
  // [start, end) starts at or after start - (longest wait on that lock).
  void addWaiterOverlap() {
    const std::vector<LockWait>& waits = timeline_.waits;
    std::map<LockId, std::pair<size_t, size_t>> range_of_lock;
    std::map<LockId, uint64_t> longest_wait;
    for (size_t i = 0; i < waits.size(); ++i) {
      auto [it, fresh] = range_of_lock.try_emplace(waits[i].lock, i, i);
      it->second.second = i + 1;
      uint64_t& longest = longest_wait[waits[i].lock];
      longest = std::max(longest, waits[i].duration());
    }
    std::vector<std::set<uint64_t>> waiters_off_cpu(held_.size());
    for (size_t i = 0; i < timeline_.sections.size(); ++i) {
      const CriticalSection& s = timeline_.sections[i];
      auto range = range_of_lock.find(s.lock);
      if (range == range_of_lock.end()) continue;
      uint64_t earliest = s.start > longest_wait[s.lock] ? s.start - longest_wait[s.lock] : 0;
      auto first = std::partition_point(waits.begin() + range->second.first,
                                        waits.begin() + range->second.second,
                                        [&](const LockWait& w) { return w.start < earliest; });
      HeldLock& h = held_[held_of_section_[i]];
      for (auto w = first; w != waits.begin() + range->second.second && w->start < s.end; ++w) {
        if (w->tid == s.tid) continue;
        h.waiter_ns_while_held += overlap(s.start, s.end, w->start, w->end);
        for (const Span& span : off_spans_[i]) {
          uint64_t lost = overlap(span.start, span.end, w->start, w->end);
          h.waiter_ns_while_off_cpu += lost;
          if (lost > 0) waiters_off_cpu[held_of_section_[i]].insert(w->tid);
        }
      }
    }
    for (size_t i = 0; i < held_.size(); ++i)
      held_[i].waiters_while_off_cpu = waiters_off_cpu[i].size();
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
    result.threads = std::move(threads_);
    return result;
  }

 private:
  void runThread(std::span<const Event> events, std::span<const format::SchedSwitch> switches,
                 std::span<const format::CpuSample> samples,
                 std::span<const format::PageFault> faults) {
    ThreadActivity thread{.tid = events.front().tid};
    std::vector<uint32_t> active;
    bool off_cpu = false;
    bool preempted = false;
    uint64_t off_since = 0;
    uint64_t union_start = 0;
    auto closeOffSpan = [&](uint32_t section, uint64_t now) {
      const CriticalSection& s = timeline_.sections[section];
      uint64_t start = std::max(off_since, s.start);
      if (now <= start) return;
      off_spans_[section].push_back({start, now});
      HeldLock& h = held_[held_of_section_[section]];
      (preempted ? h.off_cpu_preempted_ns : h.off_cpu_blocked_ns) += now - start;
    };
    auto countInside = [&](uint64_t stack_id, bool fault) {
      if (active.empty()) return;
      ++(fault ? thread.faults_in_sections : thread.samples_in_sections);
      for (uint32_t section : active) {
        HeldLock& h = held_[held_of_section_[section]];
        ++(fault ? h.faults : h.samples);
        ++(fault ? h.fault_stacks : h.sample_stacks)[stack_id];
      }
    };
    for (const Event& e : events) {
      switch (e.type) {
        case EventType::kSectionStart:
          if (active.empty()) union_start = e.time;
          active.push_back(e.index);
          thread.pid = timeline_.sections[e.index].lock.pid;
          break;
        case EventType::kSectionEnd:
          if (off_cpu) closeOffSpan(e.index, e.time);
          std::erase(active, e.index);
          if (active.empty()) thread.held_ns += e.time - union_start;
          break;
        case EventType::kSwitchOut: {
          for (uint32_t section : active) {
            HeldLock& h = held_[held_of_section_[section]];
            if (!switched_out_[section]) ++h.sections_switched_out;
            switched_out_[section] = true;
            ++(switches[e.index].prev_state == 0 ? h.preempted_switches : h.blocked_switches);
          }
          // A second switch-out without a switch-in between: an event was
          // lost; the earlier off-CPU period ends here, unmeasured.
          off_cpu = true;
          preempted = switches[e.index].prev_state == 0;
          off_since = e.time;
          break;
        }
        case EventType::kSwitchIn:
          if (off_cpu) {
            for (uint32_t section : active) closeOffSpan(section, e.time);
          }
          off_cpu = false;
          break;
        case EventType::kSample:
          ++thread.samples;
          thread.pid = samples[e.index].pid;
          countInside(samples[e.index].stack_id, false);
          break;
        case EventType::kFault:
          ++thread.faults;
          thread.pid = faults[e.index].pid;
          countInside(faults[e.index].stack_id, true);
          break;
      }
    }
    threads_.push_back(thread);
  }

  const LockTimeline& timeline_;
  std::vector<HeldLock> held_;
  std::map<HeldKey, size_t> index_of_held_;
  std::vector<size_t> held_of_section_;
  std::vector<std::vector<Span>> off_spans_;
  std::vector<bool> switched_out_;  // per section
  std::vector<ThreadActivity> threads_;
};

}  // namespace

HolderActivity correlateHolders(const LockTimeline& timeline,
                                std::span<const format::SchedSwitch> switches,
                                std::span<const format::CpuSample> samples,
                                std::span<const format::PageFault> faults, const SiteOf& site_of) {
  std::vector<Event> events = mergeEvents(timeline, switches, samples, faults);
  HolderPass pass(timeline, site_of);
  pass.run(events, switches, samples, faults);
  pass.addWaiterOverlap();
  return pass.finish();
}

}  // namespace incise::analyzer
