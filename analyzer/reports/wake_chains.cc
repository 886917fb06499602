#include "analyzer/reports/wake_chains.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

namespace incise::analyzer {
namespace {

WakeLink explain(const LockWait& wait, const WaitWakeups::Wake* w) {
  WakeLink link{.wait = wait};
  if (w) {
    link.source = WakeSource::kWakeupEvent;
    link.waker_pid = w->waker_pid;
    link.waker_tid = w->waker_tid;
    link.waker_stack_id = w->stack_id;
    link.wake_time = w->time;
  } else if (wait.releaser_tid != 0) {
    link.source = WakeSource::kReleaser;
    link.waker_pid = wait.lock.pid;
    link.waker_tid = wait.releaser_tid;
    link.wake_time = wait.end;
  }
  return link;
}

}  // namespace

WaitWakeups::WaitWakeups(const LockTimeline& timeline)
    : timeline_(timeline), wakes_(timeline.waits.size()), seen_(timeline.waits.size()) {
  for (uint32_t i = 0; i < timeline.waits.size(); ++i) {
    Waiter& waiter = waiters_[timeline.waits[i].tid];
    waiter.waits.push_back(i);
    waiter.longest = std::max(waiter.longest, timeline.waits[i].duration());
  }
  for (auto& [tid, waiter] : waiters_) {
    std::stable_sort(waiter.waits.begin(), waiter.waits.end(), [&](uint32_t a, uint32_t b) {
      return timeline.waits[a].start < timeline.waits[b].start;
    });
  }
}

void WaitWakeups::add(const format::Wakeup& wakeup) {
  auto found = waiters_.find(wakeup.wakee_tid);
  if (found == waiters_.end()) return;
  const Waiter& waiter = found->second;
  const std::vector<LockWait>& waits = timeline_.waits;
  // Waits with start <= time, from the latest start back to the earliest
  // that could still be open.
  auto after = std::upper_bound(waiter.waits.begin(), waiter.waits.end(), wakeup.time,
                                [&](uint64_t time, uint32_t i) { return time < waits[i].start; });
  uint64_t earliest = wakeup.time > waiter.longest ? wakeup.time - waiter.longest : 0;
  for (auto it = after; it != waiter.waits.begin();) {
    uint32_t i = *--it;
    if (waits[i].start < earliest) break;
    if (wakeup.time > waits[i].end) continue;
    wakes_[i] = {wakeup.waker_pid, wakeup.waker_tid, wakeup.stack_id, wakeup.time};
    seen_[i] = true;
  }
}

std::vector<WakeChain> wakeChains(const LockTimeline& timeline,
                                  std::span<const format::Wakeup> wakeups, size_t longest,
                                  size_t max_depth) {
  std::vector<size_t> by_time(wakeups.size());
  std::iota(by_time.begin(), by_time.end(), 0);
  std::stable_sort(by_time.begin(), by_time.end(),
                   [&](size_t a, size_t b) { return wakeups[a].time < wakeups[b].time; });
  WaitWakeups last_wakes(timeline);
  for (size_t i : by_time) last_wakes.add(wakeups[i]);
  return wakeChains(timeline, last_wakes, longest, max_depth);
}

std::vector<WakeChain> wakeChains(const LockTimeline& timeline, const WaitWakeups& wakeups,
                                  size_t longest, size_t max_depth) {
  const std::vector<LockWait>& waits = timeline.waits;
  std::vector<size_t> by_length(waits.size());
  std::iota(by_length.begin(), by_length.end(), 0);
  auto longer = [&](size_t a, size_t b) {
    return std::make_tuple(waits[b].duration(), waits[a].start, a) <
           std::make_tuple(waits[a].duration(), waits[b].start, b);
  };
  size_t count = std::min(longest, waits.size());
  std::partial_sort(by_length.begin(), by_length.begin() + count, by_length.end(), longer);

  // Each thread's waits, for "the waker had itself waited".
  std::vector<size_t> by_thread(waits.size());
  std::iota(by_thread.begin(), by_thread.end(), 0);
  std::sort(by_thread.begin(), by_thread.end(), [&](size_t a, size_t b) {
    return std::tie(waits[a].tid, waits[a].end, a) < std::tie(waits[b].tid, waits[b].end, b);
  });
  auto wakersOwnWait = [&](uint64_t tid, uint64_t from, uint64_t to) -> const LockWait* {
    auto first = std::lower_bound(by_thread.begin(), by_thread.end(), std::make_pair(tid, from),
                                  [&](size_t i, const std::pair<uint64_t, uint64_t>& key) {
                                    return std::make_pair(waits[i].tid, waits[i].end) < key;
                                  });
    const LockWait* best = nullptr;
    for (auto it = first; it != by_thread.end() && waits[*it].tid == tid && waits[*it].end <= to;
         ++it) {
      if (!best || waits[*it].duration() > best->duration()) best = &waits[*it];
    }
    return best;
  };

  std::vector<WakeChain> chains;
  for (size_t n = 0; n < count; ++n) {
    WakeChain chain;
    std::set<uint64_t> seen;
    const LockWait* wait = &waits[by_length[n]];
    while (wait && chain.links.size() < max_depth && seen.insert(wait->tid).second) {
      WakeLink link = explain(*wait, wakeups.lastWake(static_cast<size_t>(wait - waits.data())));
      chain.links.push_back(link);
      if (link.source == WakeSource::kNone || link.waker_tid == 0) break;
      wait = wakersOwnWait(link.waker_tid, wait->start, link.wake_time);
    }
    chains.push_back(std::move(chain));
  }
  return chains;
}

}  // namespace incise::analyzer
