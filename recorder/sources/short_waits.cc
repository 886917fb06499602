#include "recorder/sources/short_waits.h"

#include <algorithm>
#include <utility>

#include "format/log2_bucket.h"

namespace incise::recorder {

size_t ShortWaits::KeyHash::operator()(const Key& k) const {
  const auto& [tid, address, stack, releaser, releaser_stack, bucket] = k;
  uint64_t h = tid * 0x9e3779b97f4a7c15u ^ address;
  h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9u ^ stack ^ (releaser << 32);
  h = (h ^ (h >> 31)) * 0x94d049bb133111ebu ^ releaser_stack ^ (bucket << 56);
  return static_cast<size_t>(h ^ (h >> 32));
}

bool ShortWaits::summarisable(const format::LockInterval& row) const {
  using format::WaitObject;
  auto object = static_cast<WaitObject>(row.object);
  bool event_object = object == WaitObject::kCondvarGroup0 ||
                      object == WaitObject::kCondvarGroup1 || object == WaitObject::kSemaphore;
  return event_object && (row.flags & format::kLockFutexFacts) &&
         !(row.flags & format::kLockWaitUnfinished) && row.holder_tid == 0 && row.goid == 0 &&
         row.acquired_time >= row.time && row.acquired_time - row.time < min_wait_ns_;
}

bool ShortWaits::add(const format::LockInterval& row) {
  if (!summarisable(row)) return false;
  // A summary covers at most a period of trace time, so a report's --time
  // window cuts it at that resolution.
  if (!summaries_.empty() && row.time >= summaries_since_ + kSummaryPeriodNs) flush();
  if (summaries_.size() >= max_summaries_) {
    ++counts_.summary_full_flushes;
    flush();
  }
  if (summaries_.empty()) {
    summaries_since_ = row.time;
    table_start_ = row.time;
    table_end_ = row.acquired_time;
  }
  table_start_ = std::min(table_start_, row.time);
  table_end_ = std::max(table_end_, row.acquired_time);
  uint64_t ns = row.acquired_time - row.time;
  uint64_t bucket = format::log2Bucket(ns);
  auto [it, inserted] = summaries_.try_emplace(
      Key{row.tid, row.address, row.stack_id, row.releaser_tid, row.releaser_stack_id, bucket});
  format::WaitSummary& s = it->second;
  if (inserted) {
    s = {.pid = row.pid,
         .tid = row.tid,
         .address = row.address,
         .object = row.object,
         .stack_id = row.stack_id,
         .releaser_tid = row.releaser_tid,
         .releaser_stack_id = row.releaser_stack_id,
         .bucket = bucket};
  }
  s.count += 1;
  s.total_ns += ns;
  s.max_ns = std::max(s.max_ns, ns);
  ++counts_.waits;
  counts_.wait_ns += ns;
  return true;
}

void ShortWaits::flush() {
  if (summaries_.empty()) return;
  // Every row of one table covers the table's interval: the same two times
  // in each row cost next to nothing once compressed, where each row's own
  // first start and last end took a third of the rows' bytes.
  size_t first = ready_.size();
  for (auto& [key, summary] : summaries_) {
    ready_.push_back(summary);
    ready_.back().time = table_start_;
    ready_.back().end_time = table_end_;
  }
  std::sort(ready_.begin() + static_cast<std::ptrdiff_t>(first), ready_.end(),
            [](const format::WaitSummary& a, const format::WaitSummary& b) {
              return std::tie(a.pid, a.tid, a.address, a.stack_id, a.releaser_tid, a.bucket) <
                     std::tie(b.pid, b.tid, b.address, b.stack_id, b.releaser_tid, b.bucket);
            });
  counts_.summaries += summaries_.size();
  summaries_.clear();
}

std::vector<format::WaitSummary> ShortWaits::takeSummaries() {
  return std::exchange(ready_, {});
}

}  // namespace incise::recorder
