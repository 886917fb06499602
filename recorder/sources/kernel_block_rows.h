// KernelBlockRows: the rows of blocks the scheduler program decided itself
// (bpf/kernel_blocks.h: --sched-min-block above 0 on kernels with
// BTF-enabled tracepoints), where ShortBlocks would otherwise decide them
// from every switch and wake-up.
//
// The program sends a switch row (or the half of one it decided; the other
// half elided) only for blocks written whole, and counts short blocks per
// (thread, state, off-CPU stack) into tallies. A tally names its stack by a
// hash that one earlier record of the same thread carried with the frames:
// the recorder interns those frames once, and a tally becomes a block
// summary row with that stack.
//
//   KernelBlockRows rows;
//   rows.onTallyStack(tid, e.stack_hash, sink.internStack(pid, e.stack));
//   sink.append(rows.summaryOf(tally_event));
//   if (auto row = KernelBlockRows::switchRow(e, stack_id)) sink.append(*row);
//   rows.onNewThread(child_tid);                     // a tid reused: its old stacks go
//   sink.addNote(KernelBlockRows::note(counts, min_block_us));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bpf/kernel_blocks.h"
#include "format/event_kinds.h"

namespace incise::recorder {

class KernelBlockRows {
 public:
  // The row a decided switch record carries, if it carries one.
  static std::optional<format::SchedSwitch> switchRow(const decided_switch_event& e,
                                                      uint64_t stack_id);

  void onTallyStack(uint32_t tid, uint64_t stack_hash, uint64_t stack_id);
  // A tally as a block summary row; its stack is the one its hash named
  // (none if no record named it).
  format::BlockSummary summaryOf(const block_tally_event& e) const;
  // A thread's stacks stay past its exit (its last tallies are sent at its
  // last switch-out, after the exit's record) until its tid is reused.
  void onNewThread(uint32_t tid) { tally_stacks_.erase(tid); }

  // The recording's note, from the program's counts (kernel_block_count_slot).
  static std::string note(const std::vector<uint64_t>& counts, uint64_t min_block_us);

 private:
  // tid -> stack hash -> interned stack id
  std::unordered_map<uint32_t, std::unordered_map<uint64_t, uint64_t>> tally_stacks_;
};

}  // namespace incise::recorder
