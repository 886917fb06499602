// Short off-CPU intervals' rows held back and dropped: see short_blocks.h.
#include "recorder/sources/short_blocks.h"

#include <algorithm>
#include <utility>

namespace incise::recorder {

namespace {

// The kernel's TASK_DEAD in a switch's prev_state: the thread's last switch-out.
constexpr uint64_t kTaskDead = 0x80;

uint64_t timeOf(const ShortBlocks::Row& row) {
  return std::visit([](const auto& r) { return r.time; }, row);
}

}  // namespace

void ShortBlocks::onSwitch(const format::SchedSwitch& arrived, bool prev_is_target,
                           bool next_is_target, FutexWaits waits) {
  expire(arrived.time);
  format::SchedSwitch row = arrived;
  row.elided = 0;
  const auto prev_tid = static_cast<uint32_t>(row.prev_tid);
  const auto next_tid = static_cast<uint32_t>(row.next_tid);
  // next's half is decided now: it ends next's block (one that began before
  // we saw the thread is written).
  bool next_written = false;
  if (next_is_target && row.next_pid != 0) {
    next_written = true;
    if (auto it = blocks_.find(next_tid); it != blocks_.end()) {
      if (endBlock(next_tid, it->second, row.time, waits)) {
        next_written = false;
        row.elided |= format::switch_elided::kNextIn;
      }
      blocks_.erase(it);
    }
  }
  if (!prev_is_target || row.prev_pid == 0) {
    push(row, next_written ? Fate::kKeep : Fate::kDrop, 0, next_written);
    release();
    return;
  }
  auto [it, inserted] = blocks_.try_emplace(prev_tid);
  Block& block = it->second;
  // A second switch-out without a switch-in between (a lost event, or a
  // switch-in the kernel did not report): the first block's length is
  // unknown, so its rows are written, and so is this switch-out, the only
  // row that says the thread ran again (the reports take it to have run
  // from the cpu's previous written switch).
  bool switch_in_missing = !inserted;
  if (switch_in_missing) {
    decide(block, true);
    block = Block{};
  }
  block.out_time = row.time;
  block.pid = row.prev_pid;
  block.prev_state = row.prev_state;
  block.stack_id = row.stack_id;
  block.waits_begun = waits.begun;
  // A thread's first switch-out is written, so a report knows where and
  // until when it ran before its first summarised sleep.
  bool first_seen = seen_.insert(prev_tid).second;
  if ((row.prev_state & kTaskDead) != 0) seen_.erase(prev_tid);
  bool preempted = row.prev_state == 0;
  bool preemption_written =
      preempted && (preemptions_ == Preemptions::kWritten || waits.in_progress > 0);
  if (first_seen || preemption_written || switch_in_missing) {
    block.kept = true;  // written both halves
    push(row, Fate::kKeep, prev_tid, next_written);
  } else {
    block.held.push_back(push(row, Fate::kPending, prev_tid, next_written));
  }
  release();
}

bool ShortBlocks::endBlock(uint32_t tid, Block& block, uint64_t in_time, const FutexWaits& waits) {
  uint64_t off_cpu = in_time > block.out_time ? in_time - block.out_time : 0;
  bool short_block = off_cpu < min_block_ns_;
  bool preempted = block.prev_state == 0;
  // A wait that began while the thread was preempted may be one on a lock it holds.
  bool wait_began = preempted && waits.begun != block.waits_begun;
  if (!block.kept && short_block && !wait_began) {
    uint64_t wakeups = decide(block, false);
    ++counts_.short_blocks;
    counts_.short_block_ns += off_cpu;
    if (preempted) ++counts_.short_preemptions_summarised;
    summarize(tid, block, in_time, wakeups);
    return true;
  }
  if (short_block && block.prev_state == 0) ++counts_.short_preemptions_kept;
  decide(block, true);
  return false;
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
    if (keep) {
      held.fate = Fate::kKeep;
    } else if (auto* row = std::get_if<format::SchedSwitch>(&held.row)) {
      row->elided |= format::switch_elided::kPrevOut;
      held.fate = held.next_written ? Fate::kKeep : Fate::kDrop;
    } else {
      held.fate = Fate::kDrop;
      ++wakeups;
    }
  }
  block.held.clear();
  if (keep) block.kept = true;
  return wakeups;
}

uint64_t ShortBlocks::push(Row row, Fate fate, uint32_t tid, bool next_written) {
  queue_.push_back({std::move(row), fate, tid, next_written});
  return first_seq_ + queue_.size() - 1;
}

// Rows leave in arrival order, which is each cpu's order, so a row written
// after rows of its cpu were left out can say so.
void ShortBlocks::release() {
  while (!queue_.empty() && queue_.front().fate != Fate::kPending) {
    Held& held = queue_.front();
    bool keep = held.fate == Fate::kKeep;
    if (auto* row = std::get_if<format::SchedSwitch>(&held.row)) {
      bool& left_out = cpu_rows_left_out_[row->cpu];
      if (keep) {
        if (left_out) row->elided |= format::switch_elided::kCpuRowsBefore;
        if ((row->elided & (format::switch_elided::kPrevOut | format::switch_elided::kNextIn)) != 0)
          ++counts_.switches_half_elided;
      } else {
        ++counts_.switches_dropped;
      }
      left_out = !keep;
    } else if (!keep) {
      ++counts_.wakeups_dropped;
    }
    if (keep) ready_.push_back(std::move(held.row));
    queue_.pop_front();
    ++first_seq_;
  }
}

}  // namespace incise::recorder
