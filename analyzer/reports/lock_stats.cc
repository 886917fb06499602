#include "analyzer/reports/lock_stats.h"

#include <algorithm>
#include <bit>
#include <map>
#include <tuple>

namespace incise::analyzer {
namespace {

using GroupKey = std::tuple<uint64_t, uint64_t, uint64_t>;  // pid, address, site

struct GroupBuilder {
  LockGroupStats stats;
  std::vector<uint64_t> waits;
  std::vector<uint64_t> holds;
  std::map<uint64_t, ThreadTime> waiters;  // by tid
  std::map<uint64_t, ThreadTime> holders;
  std::map<LockId, uint64_t> lock_uses;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> site_uses;  // site -> (uses, a stack)
};

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

Distribution distributionOf(std::vector<uint64_t>& values) {
  Distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.count = values.size();
  for (uint64_t v : values) d.total += v;
  auto rank = [&](uint64_t percent) {
    uint64_t index = (percent * d.count + 99) / 100;  // ceil(p/100 * n), 1-based
    return values[std::max<uint64_t>(index, 1) - 1];
  };
  d.p50 = rank(50);
  d.p90 = rank(90);
  d.p99 = rank(99);
  d.max = values.back();
  return d;
}

size_t log2Bucket(uint64_t value) {
  return value == 0 ? 0 : std::bit_width(value) - 1;
}

std::vector<LockGroupStats> computeLockStats(const LockTimeline& timeline, LockGrouping grouping,
                                             const SiteOf& site_of, size_t top_threads) {
  auto site = [&](uint64_t stack_id) { return site_of ? site_of(stack_id) : stack_id; };
  std::map<GroupKey, GroupBuilder> groups;
  auto group = [&](const LockId& lock, uint64_t stack_id) -> GroupBuilder& {
    return groups[grouping == LockGrouping::kByLock ? GroupKey{lock.pid, lock.address, 0}
                                                    : GroupKey{0, 0, site(stack_id)}];
  };
  // Which lock and site name a group: recorded acquisitions vote; a section
  // votes only when its group has no acquisition at all.
  auto vote = [&](GroupBuilder& g, const LockId& lock, uint64_t stack_id) {
    ++g.lock_uses[lock];
    auto& site_use = g.site_uses[site(stack_id)];
    if (site_use.first++ == 0) site_use.second = stack_id;
  };

  for (const Acquisition& a : timeline.acquisitions) {
    GroupBuilder& g = group(a.lock, a.stack_id);
    vote(g, a.lock, a.stack_id);
    if (g.stats.acquisitions++ == 0) g.stats.kind = a.kind;
    g.stats.contended += a.contended ? 1 : 0;
    g.waits.push_back(a.wait_ns);
    addThreadTime(g.waiters, a.lock.pid, a.tid, a.contended ? 1 : 0, a.wait_ns);
  }
  for (const CriticalSection& s : timeline.sections) {
    GroupBuilder& g = group(s.lock, s.stack_id);
    if (g.stats.acquisitions == 0) {
      if (g.holds.empty()) g.stats.kind = s.kind;
      vote(g, s.lock, s.stack_id);
    }
    g.holds.push_back(s.duration());
    g.stats.hold_inferred |= s.inferred;
    ++g.stats.hold_histogram[log2Bucket(s.duration())];
    addThreadTime(g.holders, s.lock.pid, s.tid, 1, s.duration());
  }

  std::vector<LockGroupStats> result;
  result.reserve(groups.size());
  for (auto& [key, g] : groups) {
    LockGroupStats stats = g.stats;
    stats.wait = distributionOf(g.waits);
    stats.hold = distributionOf(g.holds);
    stats.top_waiters = topThreads(g.waiters, top_threads);
    stats.top_holders = topThreads(g.holders, top_threads);
    stats.locks = g.lock_uses.size();
    stats.lock = mostUsed(g.lock_uses)->first;
    if (!g.site_uses.empty()) {
      auto best = mostUsed(g.site_uses);
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

}  // namespace incise::analyzer
