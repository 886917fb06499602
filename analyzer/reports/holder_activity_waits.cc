#include "analyzer/reports/holder_activity_waits.h"

#include <bit>
#include <functional>

namespace incise::analyzer {

void WaitingIntegral::add(uint64_t start, uint64_t end) {
  sweepTo(start);
  addPoint(start, true);
  ends_.push_back(end);
  std::push_heap(ends_.begin(), ends_.end(), std::greater<>{});
  latest_end_ = std::max(latest_end_, end);
}

uint64_t WaitingIntegral::at(uint64_t time) {
  if (time > swept_) sweepTo(time);
  if (points_.empty()) return 0;
  auto after = std::upper_bound(points_.begin(), points_.end(), time,
                                [](uint64_t t, const Point& p) { return t < p.time; });
  *work_ += 1 + std::bit_width(points_.size());
  // Before the first point nothing was waiting: a point is dropped only for
  // a later one at or before the prune bound, and no one asks before it.
  if (after == points_.begin()) return points_.front().integral;
  const Point& p = *std::prev(after);
  return p.integral + p.waiting * (time - p.time);
}

void WaitingIntegral::prune(uint64_t bound) {
  while (points_.size() >= 2 && points_[1].time <= bound) {
    points_.pop_front();
    ++*work_;
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
  if (points_.empty() || points_.back().time != time) {
    const Point* last = points_.empty() ? nullptr : &points_.back();
    points_.push_back({.time = time,
                       .integral = last ? last->integral + last->waiting * (time - last->time) : 0,
                       .waiting = last ? last->waiting : 0});
  }
  Point& point = points_.back();
  point.waiting = wait_starts ? point.waiting + 1 : point.waiting - 1;
}

void LockWaitIndex::add(Wait wait) {
  // Not before what was already asked about or added (see the header).
  earliest_start_ = std::max(earliest_start_, waiting_.swept());
  wait.start = std::max(wait.start, earliest_start_);
  if (wait.end <= wait.start) return;
  earliest_start_ = wait.start;
  waits_.push_back(wait);
  if (waits_.size() > capacity_) {
    buildTree(std::bit_ceil(std::max<size_t>(16, 2 * waits_.size())));
  } else {
    updateLeaf(waits_.size() - 1);
  }
  waiting_.add(wait.start, wait.end);
  waiting_of_.try_emplace(wait.tid, work_).first->second.add(wait.start, wait.end);
}

uint64_t LockWaitIndex::waitedDuring(uint64_t a, uint64_t b, uint64_t holder) {
  if (b <= a || waits_.empty()) return 0;
  uint64_t all = waiting_.at(b) - waiting_.at(a);
  auto own = waiting_of_.find(holder);
  ++*work_;
  if (own != waiting_of_.end()) all -= own->second.at(b) - own->second.at(a);
  return all;
}

void LockWaitIndex::prune(uint64_t bound) {
  if (waits_.empty()) return;
  if (max_end_[1] <= bound) {  // every wait ended by then: none can matter again
    *work_ += 1 + waiting_of_.size();
    waits_.clear();
    max_end_.assign(max_end_.size(), 0);
    waiting_ = WaitingIntegral(work_);
    waiting_of_.clear();
    kept_at_compaction_ = 0;
    return;
  }
  waiting_.prune(bound);
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
