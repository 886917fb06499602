// ShortWaits: leaves out the lock rows of short futex waits that name no
// holder (--sched-min-block). A PostgreSQL backend waits on its semaphore, a
// thread pool's worker on its condvar, tens of thousands of times a second,
// mostly for microseconds: written one by one, their lock rows outweigh
// every other part of the trace.
//
// A wait is summarised when it is shorter than the threshold, ended (not
// cut by the end of the recording), on a condvar's group word or a
// semaphore (format::WaitObject), names no owner and no goroutine. Every
// other wait keeps its row: a wait on a lock (or on a word no layout
// matched) may have a holder, which the lock-holder analyses need exact,
// and a join's row names the thread joined. Waits are counted per (thread,
// futex word, wait stack, waker, waker's stack, log2 bucket of the wait
// time) with their count, summed and longest time, so `incise waits`
// and `incise locks` still give every semaphore's and condvar's waits,
// posters and signallers, with percentiles within their buckets.
//
// The table is written (takeSummaries) every kSummaryPeriodNs of trace time
// and whenever it reaches its entry bound, so its memory is bounded; its rows
// share one interval, from its first wait's start to its last wait's end.
//
//   ShortWaits waits(1'000'000);                      // 1 ms
//   if (!waits.add(row)) write(row);                  // every futex wait's lock row
//   for (const format::WaitSummary& s : waits.takeSummaries()) write(s);
//   waits.finish();                                   // at the end, then takeSummaries()
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "bpf/kernel_blocks.h"
#include "format/event_kinds.h"

namespace incise::recorder {

class ShortWaits {
 public:
  struct Counts {
    uint64_t waits = 0;                 // waits summarised
    uint64_t wait_ns = 0;               // their summed time
    uint64_t summaries = 0;             // summary rows made
    uint64_t summary_full_flushes = 0;  // times the table reached its bound
  };

  static constexpr size_t kDefaultMaxSummaries = 4096;
  // Trace time a summary row covers at most.
  static constexpr uint64_t kSummaryPeriodNs = SUMMARY_PERIOD_NS;

  explicit ShortWaits(uint64_t min_wait_ns, size_t max_summaries = kDefaultMaxSummaries)
      : min_wait_ns_(min_wait_ns), max_summaries_(max_summaries) {}

  // Whether the wait of this lock row (one of FutexWaitRows') was counted
  // in a summary; if not, the row is the caller's to write.
  bool add(const format::LockInterval& row);
  // Ends every summary: takeSummaries() then has them all.
  void finish() { flush(); }
  // The summaries ended since the last call: table by table, each table's
  // rows by thread, word and stack.
  std::vector<format::WaitSummary> takeSummaries();
  const Counts& counts() const { return counts_; }

 private:
  bool summarisable(const format::LockInterval& row) const;
  void flush();

  // (tid, address, stack_id, releaser_tid, releaser_stack_id, bucket); a
  // thread's pid and a word's object do not vary within a key.
  using Key = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t>;
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };

  uint64_t min_wait_ns_;
  size_t max_summaries_;
  std::unordered_map<Key, format::WaitSummary, KeyHash> summaries_;
  uint64_t summaries_since_ = 0;  // start of the first wait added to summaries_
  // The interval of the waits in summaries_: the earliest start, the latest end.
  uint64_t table_start_ = 0;
  uint64_t table_end_ = 0;
  std::vector<format::WaitSummary> ready_;
  Counts counts_;
};

}  // namespace incise::recorder
