#include "analyzer/reports/wake_chains.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

namespace incise::analyzer {
namespace {

class WakeIndex {
 public:
  explicit WakeIndex(std::span<const format::Wakeup> wakeups) : wakeups_(wakeups) {
    order_.resize(wakeups.size());
    std::iota(order_.begin(), order_.end(), 0);
    std::sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
      return std::tie(wakeups[a].wakee_tid, wakeups[a].time, a) <
             std::tie(wakeups[b].wakee_tid, wakeups[b].time, b);
    });
  }

  // The last wake-up of `tid` in [start, end], or nullptr.
  const format::Wakeup* lastWake(uint64_t tid, uint64_t start, uint64_t end) const {
    auto after =
        std::upper_bound(order_.begin(), order_.end(), std::make_pair(tid, end),
                         [&](const std::pair<uint64_t, uint64_t>& key, size_t i) {
                           return key < std::make_pair(wakeups_[i].wakee_tid, wakeups_[i].time);
                         });
    if (after == order_.begin()) return nullptr;
    const format::Wakeup& w = wakeups_[*std::prev(after)];
    return w.wakee_tid == tid && w.time >= start ? &w : nullptr;
  }

 private:
  std::span<const format::Wakeup> wakeups_;
  std::vector<size_t> order_;
};

WakeLink explain(const LockWait& wait, const WakeIndex& index) {
  WakeLink link{.wait = wait};
  if (const format::Wakeup* w = index.lastWake(wait.tid, wait.start, wait.end)) {
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

std::vector<WakeChain> wakeChains(const LockTimeline& timeline,
                                  std::span<const format::Wakeup> wakeups, size_t longest,
                                  size_t max_depth) {
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

  WakeIndex index(wakeups);
  std::vector<WakeChain> chains;
  for (size_t n = 0; n < count; ++n) {
    WakeChain chain;
    std::set<uint64_t> seen;
    const LockWait* wait = &waits[by_length[n]];
    while (wait && chain.links.size() < max_depth && seen.insert(wait->tid).second) {
      WakeLink link = explain(*wait, index);
      chain.links.push_back(link);
      if (link.source == WakeSource::kNone || link.waker_tid == 0) break;
      wait = wakersOwnWait(link.waker_tid, wait->start, link.wake_time);
    }
    chains.push_back(std::move(chain));
  }
  return chains;
}

}  // namespace incise::analyzer
