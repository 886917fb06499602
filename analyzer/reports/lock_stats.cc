#include "analyzer/reports/lock_stats.h"

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
