// ShortBlocks: drops the scheduler rows of short off-CPU intervals
// (--sched-min-block). A target thread's block runs from its switch-out to
// its next switch-in; when that is shorter than the threshold, its switch-out
// row and the wake-ups that ended it are not written, and the block is
// counted instead. On servers most blocks are tens of microseconds (an event
// loop's epoll_wait, a backend's semaphore), and their rows outnumber the
// CPU samples by hundreds to one.
//
// A block's length is known only at its end, so rows wait in arrival order
// until decided: at the thread's switch-in, or once the threshold has passed
// since the switch-out (then it is long whatever follows). Rows leave in the
// order they came, so at most a threshold's worth of rows is held.
//
// Every written timeline stays whole: a switch row is kept when either side
// needs it (prev's block is long, or next's block was long or its switch-out
// row was written), so a thread written as switched out is always written as
// switched back in.
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
    bool long_block = false;      // known long before its end
    bool switch_written = false;  // its switch-out row is kept
    std::vector<uint64_t> held;   // sequence numbers of its pending rows
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
  std::vector<Row> ready_;
  Counts counts_;
};

}  // namespace incise::recorder
