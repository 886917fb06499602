#include "analyzer/analyses/locks/lock_stats.h"

#include <algorithm>
#include <bit>
#include <map>
#include <tuple>

namespace incise::analyzer {
namespace {

void addThreadTime(std::map<uint64_t, ThreadTime>& threads, uint64_t pid, uint64_t tid,
                   uint64_t count, uint64_t ns) {
  ThreadTime& t = threads[tid];
  t.pid = pid;
  t.tid = tid;
  t.count += count;
  t.ns += ns;
}

std::vector<ThreadTime> topThreads(const std::map<uint64_t, ThreadTime>& threads, size_t limit) {
  std::vector<ThreadTime> list;
  for (const auto& [tid, t] : threads) {
    if (t.ns > 0 || t.count > 0) list.push_back(t);
  }
  std::sort(list.begin(), list.end(), [](const ThreadTime& a, const ThreadTime& b) {
    return std::tie(b.ns, b.count, a.tid) < std::tie(a.ns, a.count, b.tid);
  });
  if (list.size() > limit) list.resize(limit);
  return list;
}

uint64_t usesOf(uint64_t uses) {
  return uses;
}
uint64_t usesOf(const std::pair<uint64_t, uint64_t>& uses) {
  return uses.first;
}

// The entry used most; the first (smallest key) among equals. `uses` is not empty.
template <typename Map>
typename Map::const_iterator mostUsed(const Map& uses) {
  auto best = uses.begin();
  for (auto it = uses.begin(); it != uses.end(); ++it) {
    if (usesOf(it->second) > usesOf(best->second)) best = it;
  }
  return best;
}

}  // namespace

void NamedThreads::add(uint64_t pid, uint64_t tid, uint64_t wait_ns, bool exact,
                       uint64_t waker_stack_id, uint64_t waits) {
  Named& named = by_tid_[tid];
  named.pid = pid;
  named.waits += waits;
  named.ns += wait_ns;
  if (exact) named.exact_waits += waits;
  if (waker_stack_id == 0) return;
  // Space-Saving: a new stack past the limit takes the least used one's
  // count, so a stack used more than 1/kStacksKept of the time stays.
  auto it = named.stacks.find(waker_stack_id);
  if (it == named.stacks.end()) {
    uint64_t start = 0;
    if (named.stacks.size() >= kStacksKept) {
      auto least =
          std::min_element(named.stacks.begin(), named.stacks.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
      start = least->second;
      named.stacks.erase(least);
    }
    it = named.stacks.emplace(waker_stack_id, start).first;
  }
  it->second += waits;
}

std::vector<NamedThread> NamedThreads::top(size_t limit) const {
  std::vector<NamedThread> list;
  for (const auto& [tid, n] : by_tid_) {
    list.push_back({.pid = n.pid,
                    .tid = tid,
                    .waits = n.waits,
                    .ns = n.ns,
                    .exact_waits = n.exact_waits,
                    .stack_id = n.stacks.empty() ? 0 : mostUsed(n.stacks)->first});
  }
  std::sort(list.begin(), list.end(), [](const NamedThread& a, const NamedThread& b) {
    return std::tie(b.ns, b.waits, a.tid) < std::tie(a.ns, a.waits, b.tid);
  });
  if (list.size() > limit) list.resize(limit);
  return list;
}

LockStatsBuilder::LockStatsBuilder(LockGrouping grouping, SiteOf site_of)
    : grouping_(grouping), site_of_(std::move(site_of)) {}

LockStatsBuilder::Group& LockStatsBuilder::groupOf(const LockId& lock, uint64_t stack_id) {
  return groups_[grouping_ == LockGrouping::kByLock ? GroupKey{lock.pid, lock.address, 0}
                                                    : GroupKey{0, 0, siteOf(stack_id)}];
}

void LockStatsBuilder::vote(Votes& votes, const LockId& lock, uint64_t stack_id, uint64_t kind) {
  if (votes.locks.empty()) votes.first_kind = kind;
  ++votes.locks[lock];
  uint64_t site = siteOf(stack_id);
  auto it = votes.sites.find(site);
  if (it == votes.sites.end()) {
    uint64_t uses = 0;
    if (votes.sites.size() >= kSiteCandidates) {
      auto least = std::min_element(
          votes.sites.begin(), votes.sites.end(),
          [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
      uses = least->second.first;
      votes.sites.erase(least);
    }
    it = votes.sites.emplace(site, std::pair{uses, stack_id}).first;
  }
  ++it->second.first;
}

void LockStatsBuilder::add(const Acquisition& a) {
  Group& g = groupOf(a.lock, a.stack_id);
  vote(g.acquisition_votes, a.lock, a.stack_id, a.kind);
  ++g.acquisitions;
  g.contended += a.contended ? 1 : 0;
  g.waits.add(a.wait_ns);
  addThreadTime(g.waiters, a.lock.pid, a.tid, a.contended ? 1 : 0, a.wait_ns);
}

void LockStatsBuilder::add(const CriticalSection& s) {
  Group& g = groupOf(s.lock, s.stack_id);
  // Section votes matter only if the group never sees an acquisition; stop
  // counting them once it does.
  if (g.acquisitions == 0) vote(g.section_votes, s.lock, s.stack_id, s.kind);
  g.holds.add(s.duration());
  g.hold_inferred |= s.inferred;
  ++g.hold_histogram[log2Bucket(s.duration())];
  addThreadTime(g.holders, s.lock.pid, s.tid, 1, s.duration());
  if (!s.go_slow_paths) return;
  switch (s.start_from) {
    case HoldStart::kAcquired:
      ++g.go_holds.acquired;
      break;
    case HoldStart::kAfterPrevious:
      ++g.go_holds.after_previous;
      break;
    case HoldStart::kEpisodeStart:
      ++g.go_holds.episode_start;
      break;
  }
  if (s.goid != 0) g.goroutine_hold_ns[s.goid] += s.duration();
}

void LockStatsBuilder::noteWait(const format::LockInterval& row, const WaitClass& wait) {
  Group& g = groupOf({row.pid, row.address}, row.stack_id);
  ++g.wait_kinds[static_cast<size_t>(wait.kind)];
  bool waited = (row.flags & (format::kLockContended | format::kLockContendedOnly)) != 0 &&
                (row.flags & format::kLockTryFailed) == 0 && row.acquired_time >= row.time;
  if (!waited) return;
  if (wait.holder_tid != 0) {
    g.blamed.add(row.pid, wait.holder_tid, row.acquired_time - row.time,
                 wait.holder_source == HoldSource::kExact,
                 row.releaser_tid == wait.holder_tid ? row.releaser_stack_id : 0);
  }
  if (row.holder_tid != 0 && row.holder_state < kHolderStates) ++g.holder_states[row.holder_state];
}

std::vector<LockGroupStats> LockStatsBuilder::finish(size_t top_threads) const {
  std::vector<LockGroupStats> result;
  result.reserve(groups_.size());
  for (const auto& [key, g] : groups_) {
    const Votes& votes = g.acquisitions > 0 ? g.acquisition_votes : g.section_votes;
    LockGroupStats stats;
    stats.kind = votes.first_kind;
    stats.acquisitions = g.acquisitions;
    stats.contended = g.contended;
    stats.hold_inferred = g.hold_inferred;
    stats.hold_histogram = g.hold_histogram;
    stats.wait = g.waits.summary();
    stats.hold = g.holds.summary();
    stats.top_waiters = topThreads(g.waiters, top_threads);
    stats.top_holders = topThreads(g.holders, top_threads);
    stats.blamed = g.blamed.top(top_threads);
    if (!stats.blamed.empty()) {
      stats.holder_tid = stats.blamed.front().tid;
      stats.hold_source = stats.blamed.front().source();
    }
    stats.holder_states = g.holder_states;
    stats.go_holds = g.go_holds;
    if (!g.goroutine_hold_ns.empty()) stats.holder_goid = mostUsed(g.goroutine_hold_ns)->first;
    auto kind = std::max_element(g.wait_kinds.begin(), g.wait_kinds.end());
    stats.wait_kind = *kind > 0 ? kAllWaitKinds[kind - g.wait_kinds.begin()] : WaitKind::kFutex;
    stats.locks = votes.locks.size();
    if (!votes.locks.empty()) stats.lock = mostUsed(votes.locks)->first;
    if (!votes.sites.empty()) {
      auto best = mostUsed(votes.sites);
      stats.site = best->first;
      stats.site_stack_id = best->second.second;
    }
    result.push_back(std::move(stats));
  }
  std::sort(result.begin(), result.end(), [](const LockGroupStats& a, const LockGroupStats& b) {
    return std::tie(b.wait.total, b.hold.total, a.lock, a.site) <
           std::tie(a.wait.total, a.hold.total, b.lock, b.site);
  });
  return result;
}

std::vector<LockGroupStats> computeLockStats(const LockTimeline& timeline, LockGrouping grouping,
                                             const SiteOf& site_of, size_t top_threads) {
  LockStatsBuilder builder(grouping, site_of);
  for (const Acquisition& a : timeline.acquisitions) builder.add(a);
  for (const CriticalSection& s : timeline.sections) builder.add(s);
  return builder.finish(top_threads);
}

}  // namespace incise::analyzer
