#include "analyzer/analyses/locks/holder_activity_waits.h"

#include <bit>
#include <cstddef>
#include <functional>

namespace incise::analyzer {

// ---- WaitingIntegral ---------------------------------------------------------------

void WaitingIntegral::add(uint64_t start, uint64_t end) {
  sweepTo(start);
  addPoint(start, true);
  ends_.push_back(end);
  std::push_heap(ends_.begin(), ends_.end(), std::greater<>{});
  latest_end_ = std::max(latest_end_, end);
}

uint64_t WaitingIntegral::at(uint64_t time) {
  if (time > swept_) sweepTo(time);
  if (first_point_ == points_.size()) return 0;
  auto begin = points_.begin() + static_cast<std::ptrdiff_t>(first_point_);
  // Questions are about a section or span that just ended: gallop back from
  // the newest point, then search the last stride (O(log distance), and
  // the points read are the recent ones, in cache).
  auto high = points_.end();
  auto low = high;
  for (std::ptrdiff_t stride = 1; low != begin; stride *= 2) {
    low = high - std::min(stride, high - begin);
    ++*work_;
    if (low->time <= time) break;
    high = low;
  }
  auto after =
      std::upper_bound(low, high, time, [](uint64_t t, const Point& p) { return t < p.time; });
  *work_ += 1 + std::bit_width(static_cast<size_t>(high - low));
  // Before the first point nothing was waiting: a point is dropped only for
  // a later one at or before the prune bound, and no one asks before it.
  if (after == begin) return begin->integral;
  const Point& p = *std::prev(after);
  return p.integral + p.waiting * (time - p.time);
}

void WaitingIntegral::prune(uint64_t bound) {
  while (points_.size() - first_point_ >= 2 && points_[first_point_ + 1].time <= bound) {
    ++first_point_;
    ++*work_;
  }
  if (first_point_ > 64 && first_point_ * 2 > points_.size()) {  // amortized over the drops
    *work_ += points_.size() - first_point_;
    points_.erase(points_.begin(), points_.begin() + static_cast<std::ptrdiff_t>(first_point_));
    first_point_ = 0;
  }
}

bool WaitingIntegral::idleAfter(uint64_t bound) const {
  return latest_end_ <= bound;
}

void WaitingIntegral::sweepTo(uint64_t time) {
  while (!ends_.empty() && ends_.front() <= time) {
    std::pop_heap(ends_.begin(), ends_.end(), std::greater<>{});
    uint64_t end = ends_.back();
    ends_.pop_back();
    addPoint(end, false);
  }
  swept_ = std::max(swept_, time);
}

void WaitingIntegral::addPoint(uint64_t time, bool wait_starts) {
  ++*work_;
  if (first_point_ == points_.size() || points_.back().time != time) {
    const Point* last = first_point_ == points_.size() ? nullptr : &points_.back();
    Point point{.time = time,
                .integral = last ? last->integral + last->waiting * (time - last->time) : 0,
                .waiting = last ? last->waiting : 0};
    points_.push_back(point);
  }
  Point& point = points_.back();
  point.waiting = wait_starts ? point.waiting + 1 : point.waiting - 1;
}

// ---- LockWaitIndex -----------------------------------------------------------------

void LockWaitIndex::add(Wait wait) {
  // Not before what was already asked about or added (see the header).
  earliest_start_ = std::max(earliest_start_, asked_until_);
  wait.start = std::max(wait.start, earliest_start_);
  if (wait.end <= wait.start) return;
  earliest_start_ = wait.start;
  if (!track_focus_) wait.focus = true;
  waits_.push_back(wait);
  if (!indexed_) {
    if (waits_.size() > kScanUpTo) buildIndex();
    return;
  }
  integralsAdd(wait);
  if (waits_.size() > capacity_) {
    buildTree(std::bit_ceil(std::max<size_t>(16, 2 * waits_.size())));
  } else {
    updateLeaf(waits_.size() - 1);
  }
}

uint64_t LockWaitIndex::waitedDuring(uint64_t a, uint64_t b, uint64_t holder, bool focus_only) {
  asked_until_ = std::max(asked_until_, b);
  if (b <= a || waits_.empty()) return 0;
  if (!indexed_) return scanWaited(a, b, holder, focus_only);
  focus_only = focus_only && track_focus_;
  WaitingIntegral& waiting = focus_only ? focus_waiting_ : waiting_;
  uint64_t all = waiting.at(b) - waiting.at(a);
  auto own = waiting_of_.find(2 * holder + (focus_only ? 1 : 0));
  ++*work_;
  if (own != waiting_of_.end()) all -= own->second.at(b) - own->second.at(a);
  return all;
}

uint64_t LockWaitIndex::scanWaited(uint64_t a, uint64_t b, uint64_t holder, bool focus_only) {
  uint64_t total = 0;
  for (const Wait& w : waits_) {
    ++*work_;
    if (w.tid == holder || (focus_only && !w.focus)) continue;
    uint64_t start = std::max(a, w.start), end = std::min(b, w.end);
    if (end > start) total += end - start;
  }
  return total;
}

void LockWaitIndex::prune(uint64_t bound) {
  if (waits_.empty()) return;
  if (!indexed_) {
    *work_ += waits_.size();
    std::erase_if(waits_, [&](const Wait& w) { return w.end <= bound; });
    return;
  }
  if (max_end_[1] <= bound) {  // every wait ended by then: none can matter again
    *work_ += 1 + waiting_of_.size();
    waits_.clear();
    max_end_.clear();
    capacity_ = 0;
    waiting_ = WaitingIntegral(work_);
    focus_waiting_ = WaitingIntegral(work_);
    waiting_of_.clear();
    kept_at_compaction_ = 0;
    indexed_ = false;
    return;
  }
  waiting_.prune(bound);
  focus_waiting_.prune(bound);
  for (auto it = waiting_of_.begin(); it != waiting_of_.end();) {
    ++*work_;
    if (it->second.idleAfter(bound)) {
      it = waiting_of_.erase(it);
    } else {
      it->second.prune(bound);
      ++it;
    }
  }
  // The waits themselves once as many again have come since the last
  // compaction: amortized over their adds.
  if (waits_.size() >= 2 * kept_at_compaction_ + 64) {
    *work_ += waits_.size();
    std::erase_if(waits_, [&](const Wait& w) { return w.end <= bound; });
    kept_at_compaction_ = waits_.size();
    buildTree(std::bit_ceil(std::max<size_t>(16, 2 * waits_.size())));
  }
}

// The integrals and the tree from the waits kept; the integrals start at
// the first of them (only differences are read, and a wait no longer kept
// ended before any time still asked about).
void LockWaitIndex::buildIndex() {
  indexed_ = true;
  waiting_ = WaitingIntegral(work_);
  focus_waiting_ = WaitingIntegral(work_);
  waiting_of_.clear();
  for (const Wait& w : waits_) integralsAdd(w);
  kept_at_compaction_ = waits_.size();
  buildTree(std::bit_ceil(std::max<size_t>(16, 2 * waits_.size())));
}

void LockWaitIndex::integralsAdd(const Wait& wait) {
  waiting_.add(wait.start, wait.end);
  waiting_of_.try_emplace(2 * wait.tid, work_).first->second.add(wait.start, wait.end);
  if (track_focus_ && wait.focus) {
    focus_waiting_.add(wait.start, wait.end);
    waiting_of_.try_emplace(2 * wait.tid + 1, work_).first->second.add(wait.start, wait.end);
  }
}

void LockWaitIndex::buildTree(size_t capacity) {
  capacity_ = capacity;
  max_end_.assign(2 * capacity_, 0);
  *work_ += 2 * capacity_;
  for (size_t i = 0; i < waits_.size(); ++i) max_end_[capacity_ + i] = waits_[i].end;
  for (size_t node = capacity_ - 1; node >= 1; --node) {
    max_end_[node] = std::max(max_end_[2 * node], max_end_[2 * node + 1]);
  }
}

void LockWaitIndex::updateLeaf(size_t index) {
  size_t node = capacity_ + index;
  max_end_[node] = waits_[index].end;
  for (node /= 2; node >= 1; node /= 2) {
    ++*work_;
    max_end_[node] = std::max(max_end_[2 * node], max_end_[2 * node + 1]);
  }
}

}  // namespace incise::analyzer
