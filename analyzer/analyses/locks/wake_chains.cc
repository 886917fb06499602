#include "analyzer/analyses/locks/wake_chains.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace incise::analyzer {
namespace {

// Longest first; ties: earlier start, then the timeline's wait order.
bool longer(const LockWait& a, const LockWait& b) {
  return std::make_tuple(b.duration(), a.start, a.lock, a.end, a.tid) <
         std::make_tuple(a.duration(), b.start, b.lock, b.end, b.tid);
}

}  // namespace

LongestWaitChains::LongestWaitChains(size_t longest, size_t max_depth)
    : longest_(longest), max_depth_(max_depth) {}

bool LongestWaitChains::Longer::operator()(const LockWait& a, const LockWait& b) const {
  return longer(a, b);
}

void LongestWaitChains::addWait(const LockWait& wait, bool may_start) {
  Waiter& waiter = waiters_[wait.tid];
  Wait w{.wait = wait, .may_start = may_start};
  if (wait.goid != 0) {
    waiter.goroutine_waits.emplace(wait.end, w);
  } else {
    waiter.thread_waits.push_back(w);
  }
  ends_.emplace(wait.end, wait.tid);
  starts_.insert(wait.start);
  if (may_start && longest_ > 0) {
    longest_added_.insert(wait);
    if (longest_added_.size() > longest_) longest_added_.erase(std::prev(longest_added_.end()));
  }
}

void LongestWaitChains::add(const format::Wakeup& wakeup) {
  auto found = waiters_.find(wakeup.wakee_tid);
  if (found == waiters_.end()) return;
  // Not a goroutine's wait: its thread ran other goroutines or parked
  // meanwhile, and whoever woke the thread did not end the wait; the
  // releaser (the goroutine's unlock) did.
  for (Wait& w : found->second.thread_waits) {
    ++work_;
    if (w.wait.start > wakeup.time || wakeup.time > w.wait.end) continue;
    w.woken = true;
    w.waker_pid = wakeup.waker_pid;
    w.waker_tid = wakeup.waker_tid;
    w.waker_stack_id = wakeup.stack_id;
    w.wake_time = wakeup.time;
  }
}

void LongestWaitChains::settle(uint64_t now) {
  std::vector<std::pair<uint64_t, uint64_t>> batch;  // (waiter, end)
  while (!ends_.empty() && ends_.begin()->first < now) {
    // Plain copies, not structured bindings: clang before 16 cannot capture those.
    const uint64_t end = ends_.begin()->first;
    const uint64_t tid = ends_.begin()->second;
    ends_.erase(ends_.begin());
    Waiter& waiter = waiters_[tid];
    Wait ended = takeEndingAt(waiter, end);
    starts_.erase(starts_.find(ended.wait.start));
    longest_settled_ = std::max(longest_settled_, ended.wait.duration());
    waiter.settled.push_back(ended);
    ++settled_count_;
    batch.emplace_back(tid, end);
  }
  if (batch.empty()) return;
  std::sort(batch.begin(), batch.end());
  batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
  // Every link of these waits' chains has settled by now (links end before).
  for (auto [tid, end] : batch) {
    const std::deque<Wait>& settled = waiters_[tid].settled;
    for (auto w = settled.rbegin(); w != settled.rend() && w->wait.end >= end; ++w) {
      if (w->wait.end == end && w->may_start && longest_added_.count(w->wait) != 0) {
        keepIfLongest(*w);
      }
    }
  }
  if (settled_count_ < prune_at_) return;
  // A later chain starts at a wait in progress (or not added yet): its k-th
  // link ends at most (k - 2) x the longest settled wait before that start.
  uint64_t earliest = starts_.empty() ? now : std::min(now, *starts_.begin());
  uint64_t reach = max_depth_ < 2 ? UINT64_MAX : (max_depth_ - 2) * longest_settled_;
  uint64_t cutoff = max_depth_ < 2 ? UINT64_MAX : earliest > reach ? earliest - reach : 0;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    std::deque<Wait>& settled = it->second.settled;
    while (!settled.empty() && settled.front().wait.end < cutoff) {
      settled.pop_front();
      --settled_count_;
    }
    it = settled.empty() && !it->second.waiting() ? waiters_.erase(it) : std::next(it);
  }
  prune_at_ = std::max<size_t>(1024, 2 * settled_count_);
}

LongestWaitChains::Wait LongestWaitChains::takeEndingAt(Waiter& waiter, uint64_t end) {
  auto thread_wait = std::find_if(waiter.thread_waits.begin(), waiter.thread_waits.end(),
                                  [&](const Wait& w) { return w.wait.end == end; });
  if (thread_wait != waiter.thread_waits.end()) {
    Wait w = *thread_wait;
    waiter.thread_waits.erase(thread_wait);
    return w;
  }
  auto goroutine_wait = waiter.goroutine_waits.find(end);
  Wait w = goroutine_wait->second;
  waiter.goroutine_waits.erase(goroutine_wait);
  return w;
}

void LongestWaitChains::keepIfLongest(const Wait& w) {
  if (longest_ == 0) return;
  if (chains_.size() == longest_ && !longer(w.wait, chains_.back().first)) return;
  auto at = std::upper_bound(
      chains_.begin(), chains_.end(), w.wait,
      [](const LockWait& wait, const auto& kept) { return longer(wait, kept.first); });
  chains_.insert(at, {w.wait, chainOf(w)});
  if (chains_.size() > longest_) chains_.pop_back();
}

WakeLink LongestWaitChains::explain(const Wait& w) const {
  WakeLink link{.wait = w.wait};
  if (w.woken) {
    link.source = WakeSource::kWakeupEvent;
    link.waker_pid = w.waker_pid;
    link.waker_tid = w.waker_tid;
    link.waker_stack_id = w.waker_stack_id;
    link.wake_time = w.wake_time;
  } else if (w.wait.releaser_tid != 0) {
    link.source = WakeSource::kReleaser;
    link.waker_pid = w.wait.lock.pid;
    link.waker_tid = w.wait.releaser_tid;
    link.wake_time = w.wait.end;
  }
  return link;
}

// The waker's longest wait that ended in [from, to]; ties: the earliest end,
// then the timeline's wait order.
const LongestWaitChains::Wait* LongestWaitChains::wakersOwnWait(uint64_t tid, uint64_t from,
                                                                uint64_t to) const {
  auto found = waiters_.find(tid);
  if (found == waiters_.end()) return nullptr;
  const Wait* best = nullptr;
  // Settled waits are in the order they ended.
  const std::deque<Wait>& settled = found->second.settled;
  auto first = std::lower_bound(settled.begin(), settled.end(), from,
                                [](const Wait& w, uint64_t time) { return w.wait.end < time; });
  for (auto it = first; it != settled.end() && it->wait.end <= to; ++it) {
    const Wait& w = *it;
    ++work_;
    if (!best || w.wait.duration() > best->wait.duration() ||
        (w.wait.duration() == best->wait.duration() &&
         std::tie(w.wait.end, w.wait.lock, w.wait.start) <
             std::tie(best->wait.end, best->wait.lock, best->wait.start))) {
      best = &w;
    }
  }
  return best;
}

WakeChain LongestWaitChains::chainOf(const Wait& first) const {
  WakeChain chain;
  std::set<uint64_t> seen;
  const Wait* wait = &first;
  while (wait && chain.links.size() < max_depth_ && seen.insert(wait->wait.tid).second) {
    WakeLink link = explain(*wait);
    chain.links.push_back(link);
    if (link.source == WakeSource::kNone || link.waker_tid == 0) break;
    wait = wakersOwnWait(link.waker_tid, wait->wait.start, link.wake_time);
  }
  return chain;
}

std::vector<WakeChain> LongestWaitChains::finish() {
  settle(UINT64_MAX);
  if (!ends_.empty()) {  // waits ending at UINT64_MAX
    for (auto& [tid, waiter] : waiters_) {
      for (const Wait& w : waiter.thread_waits) waiter.settled.push_back(w);
      for (const auto& [end, w] : waiter.goroutine_waits) waiter.settled.push_back(w);
      waiter.thread_waits.clear();
      waiter.goroutine_waits.clear();
    }
    for (auto& [tid, waiter] : waiters_) {
      for (const Wait& w : waiter.settled) {
        if (w.wait.end == UINT64_MAX && w.may_start && longest_added_.count(w.wait) != 0) {
          keepIfLongest(w);
        }
      }
    }
  }
  std::vector<WakeChain> chains;
  for (auto& [wait, chain] : chains_) chains.push_back(std::move(chain));
  return chains;
}

size_t LongestWaitChains::waitsKept() const {
  return settled_count_ + starts_.size();
}

std::vector<WakeChain> wakeChains(const LockTimeline& timeline,
                                  std::span<const format::Wakeup> wakeups, size_t longest,
                                  size_t max_depth) {
  std::vector<size_t> waits(timeline.waits.size());
  std::iota(waits.begin(), waits.end(), 0);
  std::stable_sort(waits.begin(), waits.end(), [&](size_t a, size_t b) {
    return timeline.waits[a].start < timeline.waits[b].start;
  });
  std::vector<size_t> wakes(wakeups.size());
  std::iota(wakes.begin(), wakes.end(), 0);
  std::stable_sort(wakes.begin(), wakes.end(),
                   [&](size_t a, size_t b) { return wakeups[a].time < wakeups[b].time; });
  LongestWaitChains chains(longest, max_depth);
  size_t next_wait = 0;
  for (size_t i : wakes) {
    for (; next_wait < waits.size() && timeline.waits[waits[next_wait]].start <= wakeups[i].time;
         ++next_wait) {
      chains.settle(timeline.waits[waits[next_wait]].start);
      chains.addWait(timeline.waits[waits[next_wait]]);
    }
    chains.settle(wakeups[i].time);
    chains.add(wakeups[i]);
  }
  for (; next_wait < waits.size(); ++next_wait) {
    chains.settle(timeline.waits[waits[next_wait]].start);
    chains.addWait(timeline.waits[waits[next_wait]]);
  }
  return chains.finish();
}

}  // namespace incise::analyzer
