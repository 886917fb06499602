// Short off-CPU intervals' rows held back and dropped: see short_blocks.h.
#include "recorder/sources/short_blocks.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace incise::recorder {

namespace {

uint64_t timeOf(const ShortBlocks::Row& row) {
  return std::visit([](const auto& r) { return r.time; }, row);
}

}  // namespace

void ShortBlocks::onSwitch(const format::SchedSwitch& row, bool prev_is_target,
                           bool next_is_target) {
  expire(row.time);
  const auto prev_tid = static_cast<uint32_t>(row.prev_tid);
  const auto next_tid = static_cast<uint32_t>(row.next_tid);
  // Any row on this cpu ends the chance of the block whose switch-out was
  // the cpu's last row, unless it is that block's own switch-in.
  std::optional<uint32_t> open;
  if (auto it = cpu_open_.find(row.cpu); it != cpu_open_.end()) {
    open = it->second;
    cpu_open_.erase(it);
  }
  // Whether this row must be written for next's sake.
  bool needed = false;
  bool next_side = next_is_target && row.next_pid != 0;
  if (next_side) {
    auto it = blocks_.find(next_tid);
    if (it == blocks_.end()) {
      needed = true;  // its block began before we saw it
    } else {
      Block& block = it->second;
      uint64_t off_cpu = row.time > block.out_time ? row.time - block.out_time : 0;
      // Switches between two non-targets are never recorded, so the thread
      // that hands the cpu back may differ from the one that took it.
      bool bracket = !block.kept && open == next_tid && block.out_cpu == row.cpu && !prev_is_target;
      if (bracket && off_cpu < min_block_ns_ && block.prev_state != 0) {
        uint64_t wakeups = decide(block, false);
        ++counts_.short_blocks;
        counts_.short_block_ns += off_cpu;
        summarize(next_tid, block, row.time, wakeups);
      } else {
        if (bracket && off_cpu < min_block_ns_) ++counts_.short_preemptions_kept;
        decide(block, true);
        needed = true;
      }
      // Back on another cpu: the bracket left open there is over too.
      if (auto stale = cpu_open_.find(block.out_cpu);
          stale != cpu_open_.end() && stale->second == next_tid)
        cpu_open_.erase(stale);
      blocks_.erase(it);
    }
  }
  if (open && (!next_side || *open != next_tid)) {
    if (auto it = blocks_.find(*open); it != blocks_.end()) decide(it->second, true);
  }
  if (prev_is_target && row.prev_pid != 0) {
    auto [it, inserted] = blocks_.try_emplace(prev_tid);
    Block& block = it->second;
    // A second switch-out without a switch-in between (a lost event): the
    // first block's length is unknown, so its rows are written.
    if (!inserted) {
      decide(block, true);
      block = Block{};
    }
    block.out_time = row.time;
    block.out_cpu = row.cpu;
    block.pid = row.prev_pid;
    block.prev_state = row.prev_state;
    block.stack_id = row.stack_id;
    // A thread that leaves its cpu to another target never makes a bracket.
    if (needed || next_is_target) {
      block.kept = true;
      push(row, Fate::kKeep, prev_tid);
    } else {
      block.held.push_back(push(row, Fate::kPending, prev_tid));
      cpu_open_[row.cpu] = prev_tid;
    }
  } else if (needed) {
    push(row, Fate::kKeep, 0);
  } else {
    ++counts_.switches_dropped;
  }
  release();
}

void ShortBlocks::onWakeup(const format::Wakeup& row, bool wakee_is_target) {
  expire(row.time);
  auto it = wakee_is_target ? blocks_.find(static_cast<uint32_t>(row.wakee_tid)) : blocks_.end();
  if (it == blocks_.end()) {
    // Not the end of a target's block: a non-target woken, or a running one.
    ++counts_.wakeups_dropped;
  } else if (it->second.kept) {
    push(row, Fate::kKeep, 0);
  } else {
    it->second.held.push_back(push(row, Fate::kPending, it->first));
  }
  release();
}

void ShortBlocks::finish() {
  for (auto& [tid, block] : blocks_) decide(block, true);
  blocks_.clear();
  cpu_open_.clear();
  release();
  flushSummaries();
}

std::vector<ShortBlocks::Row> ShortBlocks::takeReady() {
  return std::exchange(ready_, {});
}

std::vector<format::BlockSummary> ShortBlocks::takeSummaries() {
  return std::exchange(summaries_ready_, {});
}

void ShortBlocks::summarize(uint32_t tid, const Block& block, uint64_t in_time, uint64_t wakeups) {
  // A summary covers at most a period of trace time, so a report's --time
  // window cuts it at that resolution.
  if (!summaries_.empty() && block.out_time >= summaries_since_ + kSummaryPeriodNs)
    flushSummaries();
  if (summaries_.size() >= max_summaries_) {
    ++counts_.summary_full_flushes;
    flushSummaries();
  }
  if (summaries_.empty()) summaries_since_ = block.out_time;
  uint64_t off_cpu = in_time > block.out_time ? in_time - block.out_time : 0;
  auto [it, inserted] =
      summaries_.try_emplace(SummaryKey{block.pid, tid, block.prev_state, block.stack_id});
  format::BlockSummary& summary = it->second;
  if (inserted) {
    summary = {.time = block.out_time,
               .pid = block.pid,
               .tid = tid,
               .prev_state = block.prev_state,
               .stack_id = block.stack_id};
  }
  summary.end_time = std::max(summary.end_time, in_time);
  summary.count += 1;
  summary.total_ns += off_cpu;
  summary.max_ns = std::max(summary.max_ns, off_cpu);
  summary.wakeups += wakeups;
}

void ShortBlocks::flushSummaries() {
  size_t first = summaries_ready_.size();
  for (auto& [key, summary] : summaries_) summaries_ready_.push_back(summary);
  // Written in time order, whatever the hash table's order.
  std::sort(summaries_ready_.begin() + static_cast<std::ptrdiff_t>(first), summaries_ready_.end(),
            [](const format::BlockSummary& a, const format::BlockSummary& b) {
              return std::tie(a.time, a.tid, a.stack_id) < std::tie(b.time, b.tid, b.stack_id);
            });
  counts_.summaries += summaries_.size();
  summaries_.clear();
}

// A pending row older than the threshold belongs to a block that has lasted
// at least that long: the block is long whatever comes next.
void ShortBlocks::expire(uint64_t now) {
  while (!queue_.empty() && queue_.front().fate == Fate::kPending &&
         timeOf(queue_.front().row) + min_block_ns_ <= now) {
    auto it = blocks_.find(queue_.front().tid);
    if (it == blocks_.end()) {
      queue_.front().fate = Fate::kKeep;  // unreachable: pending rows have a block
    } else {
      decide(it->second, true);
    }
    release();
  }
}

uint64_t ShortBlocks::decide(Block& block, bool keep) {
  uint64_t wakeups = 0;
  for (uint64_t seq : block.held) {
    Held& held = at(seq);
    held.fate = keep ? Fate::kKeep : Fate::kDrop;
    if (keep) continue;
    if (std::holds_alternative<format::SchedSwitch>(held.row)) {
      ++counts_.switches_dropped;
    } else {
      ++counts_.wakeups_dropped;
      ++wakeups;
    }
  }
  block.held.clear();
  if (keep) block.kept = true;
  return wakeups;
}

uint64_t ShortBlocks::push(Row row, Fate fate, uint32_t tid) {
  queue_.push_back({std::move(row), fate, tid});
  return first_seq_ + queue_.size() - 1;
}

void ShortBlocks::release() {
  while (!queue_.empty() && queue_.front().fate != Fate::kPending) {
    if (queue_.front().fate == Fate::kKeep) ready_.push_back(std::move(queue_.front().row));
    queue_.pop_front();
    ++first_seq_;
  }
}

}  // namespace incise::recorder
