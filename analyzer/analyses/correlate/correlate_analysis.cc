#include "analyzer/analyses/correlate/correlate_analysis.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "analyzer/analyses/locks/lock_sites.h"
#include "analyzer/analyses/locks/trace_wait_kinds.h"
#include "analyzer/analyses/locks/wait_summary_row.h"
#include "analyzer/model/time_merge.h"
#include "analyzer/model/time_ordered_rows.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {
namespace {

// Where a site's first stack came in the order the whole-trace pass named
// sites (sections by holder and start, then waits by lock and start): ties
// among groups are broken by that order.
class SiteOrder {
 public:
  using Key = std::tuple<int, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t>;
  void add(uint64_t site, const Key& key) {
    auto [it, fresh] = first_.try_emplace(site, key);
    if (!fresh) it->second = std::min(it->second, key);
  }
  // site -> rank (0 stays 0: the unknown site).
  std::unordered_map<uint64_t, uint64_t> ranks() const {
    std::vector<std::pair<Key, uint64_t>> by_key;
    for (const auto& [site, key] : first_) by_key.emplace_back(key, site);
    std::sort(by_key.begin(), by_key.end());
    std::unordered_map<uint64_t, uint64_t> rank{{0, 0}};
    for (const auto& [key, site] : by_key) rank.try_emplace(site, rank.size());
    return rank;
  }

 private:
  std::unordered_map<uint64_t, Key> first_;
};

HolderFocus focusOf(const Trace& trace) {
  HolderFocus focus;
  const Filter& filter = trace.options().filter;
  // --where: the waits of threads holding the values when they began.
  if (!filter.pids.empty() || !filter.tids.empty() || !filter.comms.empty() ||
      !filter.where.empty()) {
    focus.thread = [&trace](uint64_t pid, uint64_t tid, uint64_t time) {
      return trace.passesEvent(pid, tid, time);
    };
  }
  if (filter.window) {
    focus.start = trace.window().start;
    focus.end = trace.window().end;
  }
  return focus;
}

bool overlaps(const HolderFocus& focus, uint64_t start, uint64_t end) {
  return start <= focus.end && end >= focus.start;
}

}  // namespace

Correlation correlateTrace(Trace& trace, LockSites& sites, size_t chains) {
  Correlation result;
  const HolderFocus focus = focusOf(trace);
  result.thread_filter = bool(focus.thread);
  result.filtered = result.thread_filter || focus.windowed();
  WaitClassifier classifier(trace);
  SiteOf site_of = [&](uint64_t stack) { return sites.siteOf(stack); };
  HolderActivityBuilder holders(site_of, focus);
  LongestWaitChains longest(chains, kChainDepth);
  SiteOrder site_order;
  auto on_section = [&](const CriticalSection& s) {
    sites.add(s.lock.pid, s.stack_id, s.start);
    site_order.add(site_of(s.stack_id), {0, s.tid, s.start, s.end, s.lock.pid, s.lock.address});
    holders.addSection(s);
    if (focus.threadIn(s.lock.pid, s.tid, s.start) && overlaps(focus, s.start, s.end)) {
      ++result.sections;
    }
  };
  auto on_wait = [&](const LockWait& w) {
    sites.add(w.lock.pid, w.stack_id, w.start);
    site_order.add(site_of(w.stack_id), {1, w.lock.pid, w.lock.address, w.start, w.end, w.tid});
    holders.addWait(w);
    bool in_focus = focus.threadIn(w.lock.pid, w.tid, w.start) && overlaps(focus, w.start, w.end);
    longest.addWait(w, in_focus);
    if (in_focus) ++result.waits;
  };
  LockRowStream stream({.section = on_section, .wait = on_wait});
  // Every row of the file: the filter is the focus, above.
  constexpr RowScope kAll = RowScope::kAll;
  TimeOrderedRows<format::LockInterval> locks(trace, /*progress=*/false, LookAhead::kBigStreams,
                                              kAll);
  if (locks.peek() != nullptr) {
    TimeOrderedRows<format::LockRelease> releases(trace, false, LookAhead::kBigStreams, kAll);
    TimeOrderedRows<format::SchedSwitch> switches(trace, true, LookAhead::kBigStreams, kAll);
    TimeOrderedRows<format::CpuSample> samples(trace, false, LookAhead::kBigStreams, kAll);
    TimeOrderedRows<format::PageFault> faults(trace, false, LookAhead::kBigStreams, kAll);
    TimeOrderedRows<format::Wakeup> wakeups(trace, false, LookAhead::kBigStreams, kAll);
    bool started = false;
    uint64_t settled = 0;
    // Ties: a lock row first, then releases, switches, samples, faults, wake-ups.
    mergeByTime(
        [&](uint64_t now) {
          if (!started || now > settled) {  // everything before `now` is in
            stream.settleBefore(now);
            holders.settle(now, &stream);
            longest.settle(now);
            started = true;
            settled = now;
          }
        },
        timeStream(locks,
                   [&](const format::LockInterval& lock) {
                     // One decision of what a row waited for, as in `incise locks` and
                     // `incise waits`: only lock kinds make sections and chains.
                     WaitClass wait = classifier.classify(lock);
                     if (blamesHolder(wait.kind)) {
                       format::LockInterval row = classifier.normalized(lock, wait);
                       if (row.lock_kind == static_cast<uint64_t>(format::LockKind::kFutex))
                         row.lock_kind = static_cast<uint64_t>(recordedLockKind(wait.kind));
                       stream.add(row);
                     } else if (focus.threadIn(lock.pid, lock.tid, lock.time) &&
                                overlaps(focus, lock.time, lock.acquired_time)) {
                       result.unblamed.add(lock, wait);
                     }
                   }),
        timeStream(releases, [&](const format::LockRelease& release) { stream.add(release); }),
        timeStream(switches, [&](const format::SchedSwitch& sw) { holders.add(sw); }),
        timeStream(samples, [&](const format::CpuSample& sample) { holders.add(sample); }),
        timeStream(faults, [&](const format::PageFault& fault) { holders.add(fault); }),
        timeStream(wakeups, [&](const format::Wakeup& wake) { longest.add(wake); }));
  }
  // Short condvar and semaphore waits the recorder summarised blame no holder.
  TimeOrderedRows<format::WaitSummary> summaries(trace, false, LookAhead::kBigStreams, kAll);
  for (const format::WaitSummary* summary; (summary = summaries.peek()) != nullptr;
       summaries.pop()) {
    format::LockInterval shared = waitRowOf(*summary);
    if (focus.threadIn(shared.pid, shared.tid, shared.time) &&
        overlaps(focus, shared.time, shared.acquired_time))
      result.unblamed.add(*summary, classifier.classify(shared));
  }
  result.counts = stream.finish();
  result.unblamed.finish();
  // Equal groups in the order of their sites' first stacks (see SiteOrder).
  std::unordered_map<uint64_t, uint64_t> rank = site_order.ranks();
  result.activity =
      holders.finish(/*idle_groups=*/false, [&](uint64_t site) { return rank.at(site); });
  result.chains = longest.finish();
  result.holder_switches = result.activity.holder_switches;
  return result;
}

}  // namespace incise::analyzer
