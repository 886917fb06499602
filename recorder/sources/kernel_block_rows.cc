// Rows of blocks the scheduler program decided: see kernel_block_rows.h.
#include "recorder/sources/kernel_block_rows.h"

#include <cstdio>

namespace incise::recorder {

static_assert(DECIDED_PREV_ELIDED == format::switch_elided::kPrevOut);
static_assert(DECIDED_NEXT_ELIDED == format::switch_elided::kNextIn);
static_assert(DECIDED_CPU_ROWS_BEFORE == format::switch_elided::kCpuRowsBefore);

std::optional<format::SchedSwitch> KernelBlockRows::switchRow(const decided_switch_event& e,
                                                              uint64_t stack_id) {
  if ((e.flags & DECIDED_ROW) == 0) return std::nullopt;
  constexpr uint32_t kElidedBits =
      DECIDED_PREV_ELIDED | DECIDED_NEXT_ELIDED | DECIDED_CPU_ROWS_BEFORE;
  return format::SchedSwitch{.time = e.header.time,
                             .cpu = e.header.cpu,
                             .prev_pid = e.header.pid,
                             .prev_tid = e.header.tid,
                             .prev_state = e.prev_state,
                             .next_pid = e.next_pid,
                             .next_tid = e.next_tid,
                             .stack_id = stack_id,
                             .goid = e.prev_goid,
                             .next_goid = e.next_goid,
                             .elided = e.elided & kElidedBits};
}

void KernelBlockRows::onTallyStack(uint32_t tid, uint64_t stack_hash, uint64_t stack_id) {
  tally_stacks_[tid][stack_hash] = stack_id;
}

format::BlockSummary KernelBlockRows::summaryOf(const block_tally_event& e) const {
  uint64_t stack_id = 0;
  if (auto thread = tally_stacks_.find(e.header.tid); thread != tally_stacks_.end()) {
    if (auto stack = thread->second.find(e.stack_hash); stack != thread->second.end())
      stack_id = stack->second;
  }
  return format::BlockSummary{.time = e.header.time,
                              .end_time = e.end_time < e.header.time ? e.header.time : e.end_time,
                              .pid = e.header.pid,
                              .tid = e.header.tid,
                              .prev_state = e.prev_state,
                              .stack_id = stack_id,
                              .count = e.count,
                              .total_ns = e.total_ns,
                              .max_ns = e.max_ns,
                              .wakeups = e.wakeups};
}

std::string KernelBlockRows::note(const std::vector<uint64_t>& counts, uint64_t min_block_us) {
  auto count = [&](int slot) {
    return static_cast<unsigned long long>(static_cast<size_t>(slot) < counts.size() ? counts[slot]
                                                                                     : 0);
  };
  char text[640];
  std::snprintf(text, sizeof text,
                "scheduler: %llu off-CPU intervals shorter than %llu us decided in the kernel and "
                "not written (%.3f ms off-CPU in all, %llu of them preemptions; %llu of their "
                "wake-ups never sent; --sched-min-block), counted in %llu block summary rows "
                "(%llu written early, their thread's tallies all taken); %llu blocks written "
                "once known long, %llu still open at the end; %llu short preemptions written "
                "(a futex wait on a lock began while they lasted)",
                count(KERNEL_BLOCKS_SHORT), static_cast<unsigned long long>(min_block_us),
                static_cast<double>(count(KERNEL_BLOCKS_SHORT_NS)) / 1e6,
                count(KERNEL_BLOCKS_SHORT_PREEMPTED), count(KERNEL_BLOCKS_WAKEUPS_DROPPED),
                count(KERNEL_BLOCKS_TALLIES), count(KERNEL_BLOCKS_TALLIES_EARLY),
                count(KERNEL_BLOCKS_LATE_ROWS), count(KERNEL_BLOCKS_SWEPT),
                count(KERNEL_BLOCKS_PREEMPTIONS_KEPT));
  return text;
}

}  // namespace incise::recorder
