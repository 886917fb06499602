// ShortBlocks: leaves out the scheduler rows of short off-CPU intervals
// (--sched-min-block). On servers most blocks are tens of microseconds (an
// event loop's epoll_wait, a backend's semaphore), and their switch and
// wake-up rows outnumber the CPU samples by hundreds to one.
//
// A target thread's block runs from its switch-out to its next switch-in,
// wherever the two fall: any cpu, and whoever leaves or takes the cpu at
// each end. It is summarised instead of written when it is shorter than the
// threshold. A short preemption is summarised too, as runqueue time, unless
// a futex wait on a lock (the source counts those whose word may have a
// holder: not a condvar's, semaphore's or thread's) was in progress when it
// began or began while it lasted: a
// lock holder's preemption while others wait is what correlate looks for,
// and a holder is known only from the waits (with lock calls probed, or
// Go's mutexes, where waits are not futex waits, every preemption is
// written: ShortBlocks::Preemptions). Its two halves are then marked elided on their switch rows
// (format::switch_elided) and its wake-ups are dropped. A switch row has two
// halves, prev's switch-out and next's switch-in; only a target's half can
// keep it, so a row whose every target half is elided is not written, and a
// written row says which of its halves are not switches of their thread
// (that thread reads as running through its short block). A thread's first
// switch-out is always written, so a report knows where it ran before its
// first summarised sleep. The first row
// written on a cpu after rows of that cpu were left out says so too, since
// its prev need not be the last written row's next there.
//
// A summarised block is not lost: it is added to a summary per (thread,
// state at switch-out, off-CPU stack) with its count, time and wake-ups, so
// the reports can charge it to the right state and stack. The table of
// summaries is written (takeSummaries) every kSummaryPeriodNs of trace time
// and whenever it reaches its entry bound, so its memory is bounded.
//
// A block's fate is known at its switch-in, or once the threshold has passed
// since its switch-out. A row waits until its prev's half is decided (next's
// half is decided when the row arrives: it ends next's block) and rows leave
// in arrival order, so at most a threshold's worth of rows is held.
//
//   ShortBlocks blocks(1'000'000);  // 1 ms
//   blocks.onSwitch(row, prev_is_target, next_is_target);
//   blocks.onWakeup(row, wakee_is_target);
//   for (const ShortBlocks::Row& r : blocks.takeReady()) write(r);
//   for (const format::BlockSummary& s : blocks.takeSummaries()) write(s);
//   blocks.finish();  // at the end: everything still held is written
#pragma once

#include <cstdint>
#include <deque>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "bpf/kernel_blocks.h"
#include "format/writer.h"

namespace incise::recorder {

class ShortBlocks {
 public:
  using Row = std::variant<format::SchedSwitch, format::Wakeup>;

  // What becomes of a short preemption.
  enum class Preemptions : uint8_t {
    kWritten,                // always written
    kSummarisedOutsideWaits  // summarised unless a lock's futex wait overlaps it
  };
  // What the source knows of futex waits on locks when a switch arrives (no
  // member initializers: a default argument of the enclosing class's own member).
  struct FutexWaits {
    uint64_t in_progress;  // waits begun and not ended
    uint64_t begun;        // waits begun since the recording started
  };

  struct Counts {
    uint64_t short_blocks = 0;      // off-CPU intervals below the threshold
    uint64_t short_block_ns = 0;    // their summed length
    uint64_t switches_dropped = 0;  // switch rows not written
    uint64_t wakeups_dropped = 0;   // wake-up rows not written
    // Switch rows written with one half elided (the other half is real).
    uint64_t switches_half_elided = 0;
    // Short preemptions written (a lock's futex wait overlapped them, or they are
    // always written), and those summarised (in short_blocks too).
    uint64_t short_preemptions_kept = 0;
    uint64_t short_preemptions_summarised = 0;
    uint64_t summaries = 0;             // summary rows made
    uint64_t summary_full_flushes = 0;  // times the table reached its bound
  };

  // Summaries held before the table is written out early.
  static constexpr size_t kDefaultMaxSummaries = 4096;
  // Trace time a summary row covers at most.
  static constexpr uint64_t kSummaryPeriodNs = SUMMARY_PERIOD_NS;

  explicit ShortBlocks(uint64_t min_block_ns,
                       Preemptions preemptions = Preemptions::kSummarisedOutsideWaits,
                       size_t max_summaries = kDefaultMaxSummaries)
      : min_block_ns_(min_block_ns), preemptions_(preemptions), max_summaries_(max_summaries) {}

  void onSwitch(const format::SchedSwitch& row, bool prev_is_target, bool next_is_target,
                FutexWaits waits = FutexWaits{0, 0});
  // A wake-up is written only with the long block of a target thread it ends.
  void onWakeup(const format::Wakeup& row, bool wakee_is_target);
  // Writes everything still held (the recording ends inside those blocks)
  // and every summary.
  void finish();

  // The rows decided since the last call, in arrival order.
  std::vector<Row> takeReady();
  // The summaries written out since the last call.
  std::vector<format::BlockSummary> takeSummaries();
  const Counts& counts() const { return counts_; }

 private:
  enum class Fate : uint8_t { kPending, kKeep, kDrop };
  struct Held {
    Row row;
    Fate fate;
    uint32_t tid;               // whose block decides a pending row
    bool next_written = false;  // a switch row whose next half is a real switch-in
  };
  struct Block {
    uint64_t out_time = 0;
    uint64_t pid = 0;
    uint64_t prev_state = 0;
    uint64_t stack_id = 0;
    uint64_t waits_begun = 0;    // FutexWaits::begun at its switch-out
    bool kept = false;           // decided: its rows are written
    std::vector<uint64_t> held;  // sequence numbers of its pending rows
  };
  // (pid, tid, prev_state, stack_id)
  using SummaryKey = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>;
  struct SummaryKeyHash {
    size_t operator()(const SummaryKey& k) const {
      uint64_t h = std::get<1>(k) * 0x9e3779b97f4a7c15u ^ std::get<3>(k);
      h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9u ^ std::get<2>(k) ^ (std::get<0>(k) << 40);
      return static_cast<size_t>(h ^ (h >> 32));
    }
  };

  void expire(uint64_t now);
  // `tid` switches in at `in_time`, ending `block`: returns whether the block
  // is summarised (its halves elided).
  bool endBlock(uint32_t tid, Block& block, uint64_t in_time, const FutexWaits& waits);
  // Returns the wake-up rows dropped with the block.
  uint64_t decide(Block& block, bool keep);
  void summarize(uint32_t tid, const Block& block, uint64_t in_time, uint64_t wakeups);
  void flushSummaries();
  uint64_t push(Row row, Fate fate, uint32_t tid, bool next_written = false);
  Held& at(uint64_t seq) { return queue_[seq - first_seq_]; }
  void release();

  uint64_t min_block_ns_;
  Preemptions preemptions_;
  size_t max_summaries_;
  std::deque<Held> queue_;
  uint64_t first_seq_ = 0;  // sequence number of queue_.front()
  std::unordered_map<uint32_t, Block> blocks_;
  std::unordered_set<uint32_t> seen_;  // targets whose first switch-out was written
  // cpu -> whether a switch row of that cpu was left out since the last one
  // written there.
  std::unordered_map<uint64_t, bool> cpu_rows_left_out_;
  std::vector<Row> ready_;
  std::unordered_map<SummaryKey, format::BlockSummary, SummaryKeyHash> summaries_;
  uint64_t summaries_since_ = 0;  // switch-out of the oldest block in summaries_
  std::vector<format::BlockSummary> summaries_ready_;
  Counts counts_;
};

}  // namespace incise::recorder
