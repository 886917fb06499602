// ShortBlocks: drops the scheduler rows of short off-CPU intervals
// (--sched-min-block). On servers most blocks are tens of microseconds (an
// event loop's epoll_wait, a backend's semaphore), and their switch and
// wake-up rows outnumber the CPU samples by hundreds to one.
//
// A target thread's block runs from its switch-out to its next switch-in.
// Its rows are dropped, and the block counted instead, when it is shorter
// than the threshold and it is a bracket on one cpu: the thread switches out
// to the idle task or to a thread outside the targets, and the very next row
// on that cpu switches it back in. Dropping such a pair leaves every cpu's
// sequence of switches whole (the row before says the thread came in, the
// row after says it leaves) and every thread's ins and outs alternating, so
// the reports' timelines stay consistent: the thread reads as running
// through the short block. Any other block is written whole.
//
// A block's fate is known at the next row on its cpu, at its switch-in, or
// once the threshold has passed since its switch-out. Rows wait in arrival
// order until decided and leave in that order, so at most a threshold's
// worth of rows is held.
//
//   ShortBlocks blocks(1'000'000);  // 1 ms
//   blocks.onSwitch(row, prev_is_target, next_is_target);
//   blocks.onWakeup(row, wakee_is_target);
//   for (const ShortBlocks::Row& r : blocks.takeReady()) write(r);
//   blocks.finish();  // at the end: everything still held is written
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <variant>
#include <vector>

#include "format/writer.h"

namespace incise::recorder {

class ShortBlocks {
 public:
  using Row = std::variant<format::SchedSwitch, format::Wakeup>;

  struct Counts {
    uint64_t short_blocks = 0;      // off-CPU intervals below the threshold
    uint64_t short_block_ns = 0;    // their summed length
    uint64_t switches_dropped = 0;  // switch rows not written
    uint64_t wakeups_dropped = 0;   // wake-up rows not written
  };

  explicit ShortBlocks(uint64_t min_block_ns) : min_block_ns_(min_block_ns) {}

  void onSwitch(const format::SchedSwitch& row, bool prev_is_target, bool next_is_target);
  // A wake-up is written only with the long block of a target thread it ends.
  void onWakeup(const format::Wakeup& row, bool wakee_is_target);
  // Writes everything still held: the recording ends inside those blocks.
  void finish();

  // The rows decided since the last call, in arrival order.
  std::vector<Row> takeReady();
  const Counts& counts() const { return counts_; }

 private:
  enum class Fate : uint8_t { kPending, kKeep, kDrop };
  struct Held {
    Row row;
    Fate fate;
    uint32_t tid;  // whose block decides a pending row
  };
  struct Block {
    uint64_t out_time = 0;
    uint64_t out_cpu = 0;
    bool kept = false;           // decided: its rows are written
    std::vector<uint64_t> held;  // sequence numbers of its pending rows
  };

  void expire(uint64_t now);
  void decide(Block& block, bool keep);
  uint64_t push(Row row, Fate fate, uint32_t tid);
  Held& at(uint64_t seq) { return queue_[seq - first_seq_]; }
  void release();

  uint64_t min_block_ns_;
  std::deque<Held> queue_;
  uint64_t first_seq_ = 0;  // sequence number of queue_.front()
  std::unordered_map<uint32_t, Block> blocks_;
  // cpu -> the thread whose switch-out is the last row on that cpu while its
  // block can still be dropped.
  std::unordered_map<uint64_t, uint32_t> cpu_open_;
  std::vector<Row> ready_;
  Counts counts_;
};

}  // namespace incise::recorder
