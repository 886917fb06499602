#include "analyzer/analyses/locks/wait_stats.h"

#include <algorithm>

#include "analyzer/analyses/locks/wait_summary_row.h"

namespace incise::analyzer {
namespace {

template <typename Map>
typename Map::const_iterator mostUsed(const Map& uses) {
  auto best = uses.begin();
  for (auto it = uses.begin(); it != uses.end(); ++it) {
    if (it->second > best->second) best = it;
  }
  return best;
}

void addGoroutine(std::map<uint64_t, GoroutineWaits>& goroutines, uint64_t goid, uint64_t ns) {
  GoroutineWaits& g = goroutines[goid];
  g.goid = goid;
  ++g.waits;
  g.ns += ns;
}

std::vector<GoroutineWaits> topGoroutines(const std::map<uint64_t, GoroutineWaits>& goroutines,
                                          size_t top) {
  std::vector<GoroutineWaits> list;
  for (const auto& [goid, g] : goroutines) list.push_back(g);
  std::sort(list.begin(), list.end(), [](const GoroutineWaits& a, const GoroutineWaits& b) {
    return std::tie(b.waits, b.ns, a.goid) < std::tie(a.waits, a.ns, b.goid);
  });
  if (list.size() > top) list.resize(top);
  return list;
}

}  // namespace

bool isWait(const format::LockInterval& row) {
  if (row.flags & format::kLockTryFailed) return false;
  if (row.acquired_time < row.time) return false;
  return (row.flags & (format::kLockContended | format::kLockContendedOnly)) != 0;
}

WaitStatsBuilder::WaitStatsBuilder(WaitGrouping grouping, SiteOf site_of)
    : grouping_(grouping), site_of_(std::move(site_of)) {}

void WaitStatsBuilder::add(const format::LockInterval& row, const WaitClass& wait,
                           std::optional<uint64_t> value) {
  if (!isWait(row)) return;
  uint64_t ns = row.acquired_time - row.time;
  addWaits(row, wait, value, {.count = 1, .total = ns, .max = ns});
}

void WaitStatsBuilder::add(const format::WaitSummary& summary, const WaitClass& wait,
                           std::optional<uint64_t> value) {
  if (summary.count == 0) return;
  addWaits(waitRowOf(summary), wait, value,
           {.count = summary.count, .total = summary.total_ns, .max = summary.max_ns});
}

void WaitStatsBuilder::addWaits(const format::LockInterval& row, const WaitClass& wait,
                                std::optional<uint64_t> value, const WaitTimes& times) {
  uint64_t site = siteOf(row.stack_id);
  auto kind = static_cast<uint8_t>(wait.kind);
  uint64_t id = grouping_ == WaitGrouping::kByObject ? wait.object
                : grouping_ == WaitGrouping::kBySite ? site
                                                     : row.tid;
  uint64_t pid = grouping_ == WaitGrouping::kBySite ? 0 : row.pid;
  if (grouping_ == WaitGrouping::kByContext) {
    pid = value ? 0 : 1;
    id = value.value_or(0);
  }
  Group& g = groups_[{kind, pid, id}];
  g.value = value;
  g.kind = wait.kind;
  g.pid = row.pid;
  g.tid = row.tid;
  g.waits.addSummarised(times.count, times.total, times.max);
  if (row.flags & format::kLockWaitUnfinished) g.unfinished += times.count;
  ThreadTime& waiter = g.waiters[row.tid];
  waiter.pid = row.pid;
  waiter.tid = row.tid;
  waiter.count += times.count;
  waiter.ns += times.total;
  g.objects[{row.pid, wait.object}] += times.count;
  auto [site_it, fresh] = g.sites.try_emplace(site, std::pair<uint64_t, uint64_t>{0, row.stack_id});
  site_it->second.first += times.count;
  if (wait.holder_tid != 0) {
    g.named.add(row.pid, wait.holder_tid, times.total, wait.holder_source == HoldSource::kExact,
                row.releaser_tid == wait.holder_tid ? row.releaser_stack_id : 0, times.count);
  }
  if (row.holder_state < kHolderStates && row.holder_tid != 0)
    g.holder_states[row.holder_state] += times.count;
  if (row.goid != 0) addGoroutine(g.goroutine_waiters, row.goid, times.total);
  if (row.releaser_goid != 0) addGoroutine(g.goroutine_releasers, row.releaser_goid, times.total);
  Kind& k = kinds_[kind];
  k.waits.addSummarised(times.count, times.total, times.max);
  k.objects.insert({row.pid, wait.object});
}

std::vector<WaitGroupStats> WaitStatsBuilder::finish(size_t top_threads) const {
  std::vector<WaitGroupStats> result;
  result.reserve(groups_.size());
  for (const auto& [key, g] : groups_) {
    WaitGroupStats stats;
    stats.kind = g.kind;
    stats.wait = g.waits.summary();
    stats.unfinished = g.unfinished;
    stats.holder_states = g.holder_states;
    stats.objects = g.objects.size();
    auto object = mostUsed(g.objects);
    stats.pid = object->first.first;
    stats.object = object->first.second;
    auto site = std::max_element(g.sites.begin(), g.sites.end(), [](const auto& a, const auto& b) {
      return a.second.first < b.second.first;
    });
    stats.site = site->first;
    stats.site_stack_id = site->second.second;
    stats.tid = grouping_ == WaitGrouping::kByThread ? g.tid : 0;
    stats.by_context = grouping_ == WaitGrouping::kByContext;
    if (stats.by_context) stats.value = g.value;
    for (const auto& [tid, t] : g.waiters) stats.top_waiters.push_back(t);
    std::sort(stats.top_waiters.begin(), stats.top_waiters.end(),
              [](const ThreadTime& a, const ThreadTime& b) {
                return std::tie(b.ns, b.count, a.tid) < std::tie(a.ns, a.count, b.tid);
              });
    if (stats.top_waiters.size() > top_threads) stats.top_waiters.resize(top_threads);
    stats.top_named = g.named.top(top_threads);
    if (!stats.top_named.empty()) {
      stats.holder_tid = stats.top_named.front().tid;
      stats.hold_source = stats.top_named.front().source();
    }
    stats.goroutine_waiters = topGoroutines(g.goroutine_waiters, top_threads);
    stats.goroutine_releasers = topGoroutines(g.goroutine_releasers, top_threads);
    stats.goroutines_waiting = g.goroutine_waiters.size();
    stats.goroutines_releasing = g.goroutine_releasers.size();
    result.push_back(std::move(stats));
  }
  std::sort(result.begin(), result.end(), [](const WaitGroupStats& a, const WaitGroupStats& b) {
    return std::tie(b.wait.total, b.wait.count, a.kind, a.pid, a.object, a.site, a.tid) <
           std::tie(a.wait.total, a.wait.count, b.kind, b.pid, b.object, b.site, b.tid);
  });
  return result;
}

std::vector<WaitKindTotals> WaitStatsBuilder::kinds() const {
  std::vector<WaitKindTotals> result;
  for (WaitKind kind : kAllWaitKinds) {
    auto it = kinds_.find(static_cast<uint8_t>(kind));
    if (it == kinds_.end()) continue;
    result.push_back(
        {.kind = kind, .objects = it->second.objects.size(), .wait = it->second.waits.summary()});
  }
  return result;
}

}  // namespace incise::analyzer
