// PreloadSections: lock rows from the records libincise-preload.so writes
// (preload/ring_layout.h), the same rows the uprobes of `--locks all` give
// (recorder/sources/lock_source.h): one format::LockInterval per critical
// section, request = the call, acquired = its return, release = the
// outermost unlock; a re-acquire by the holder folds into the outer section
// (kLockRecursive); a failed trylock is a row of its own (kLockTryFailed).
//
// A futex wait inside a lock call marks the call contended. The scheduler
// source sees the wait (recorder/sources/futex_wait_rows.h) and the library
// sees the call; the two are joined here by thread and time: a wait whose
// block lies within a call's [request, return] belongs to that call. A call
// may wait several times (woken, it can find the mutex taken again): it
// takes the first wait's holder and stack (the full stack the scheduler
// program walked; an uncontended section's stack is its call site alone)
// and the last one's releaser, as the uprobes do.
// A wait can arrive before or after its call's record:
//   - after: rows that may have waited (a call of at least kMayHaveWaitedNs)
//     are held until a wait that ended kJoinWindowNs after their return was
//     seen (the scheduler's records come in time order, and a wait's row
//     comes at its end, before its call returns), or at most kMaxHoldNs;
//   - before: the caller says whether the thread was inside a lock call
//     when the wait began (the ring's call_request); such a wait is kept
//     for the thread's next record.
// A wait outside every call (a condition variable, a join) is not claimed
// and stays a wait row.
//
//   PreloadSections sections(emit, intern_site);
//   sections.onRecord(pid, tid, record);                  // drained from a ring
//   if (sections.claimWait(wait_row, call_request)) ...   // the wait is a call's
//   sections.flush(now);  ...  sections.finish();
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <vector>

#include "format/event_kinds.h"
#include "preload/ring_layout.h"

namespace incise::recorder {

class PreloadSections {
 public:
  using Emit = std::function<void(const format::LockInterval&)>;
  // The stack id of a call site (one user frame) in process `pid`.
  using InternSite = std::function<uint64_t(uint32_t pid, uint64_t site)>;

  // A call this long may have blocked in the kernel: a futex block and its
  // wake-up take longer (several us of switches on this machine).
  static constexpr uint64_t kMayHaveWaitedNs = 2'000;
  // How far the scheduler's waits may come out of order.
  static constexpr uint64_t kJoinWindowNs = 50'000'000;
  // A row is held at most this long (by the recorder's clock) when no later
  // wait comes to say that its own would have come by now.
  static constexpr uint64_t kMaxHoldNs = 2'000'000'000;
  // As the uprobes: a call slower than this is contended even without a
  // futex wait (spin locks never wait in the kernel).
  static constexpr uint64_t kContendedNs = 50'000;
  // Sections open at once (threads x locks held); past it, rows are written unreleased.
  static constexpr size_t kMaxOpenSections = 1u << 16;

  PreloadSections(Emit emit, InternSite intern_site)
      : emit_(std::move(emit)), intern_site_(std::move(intern_site)) {}

  // A record of thread `tid` of `pid`, in the ring's order. False when the
  // record is malformed (unknown type or kind).
  bool onRecord(uint32_t pid, uint32_t tid, const preload::Record& record);
  // A futex wait row (kLockFutexFacts) of a thread of a preloaded process.
  // `call_request`: the thread's ring's call_request, read before the ring
  // was drained for this call (0: not in a call). True: the wait belongs to
  // a lock call and must not be written as a wait row.
  bool claimWait(const format::LockInterval& wait, uint64_t call_request);
  // Writes the held rows no wait can join any more (`now`: the recorder's clock).
  void flush(uint64_t now);
  // Recording stopped: every row, open sections unreleased.
  void finish();

 private:
  using Thread = std::pair<uint32_t, uint32_t>;  // pid, tid
  struct Section {
    format::LockInterval row;
    uint32_t depth = 1;   // open sections: re-acquires by the holder, plus one
    bool joined = false;  // a wait was joined to it
  };
  // Waits kept per thread ahead of their call's record, at most (the rest
  // keep only the contention).
  static constexpr size_t kMaxEarlyWaits = 64;

  void onAcquire(uint32_t pid, uint32_t tid, const preload::Record& record);
  void onRelease(uint32_t pid, uint32_t tid, const preload::Record& record);
  // The thread's open sections (a thread's records come in runs: the last one is kept at hand).
  std::vector<Section>& openOf(Thread thread);
  // A finished row: written now, or held for waits still to come.
  void finished(const Section& section);
  static bool encloses(const format::LockInterval& call, const format::LockInterval& wait);
  static void join(Section& call, const format::LockInterval& wait);

  Emit emit_;
  InternSite intern_site_;
  std::map<Thread, std::vector<Section>> open_;  // a few per thread: the locks it holds
  size_t open_count_ = 0;
  Thread last_thread_{0, 0};
  std::vector<Section>* last_open_ = nullptr;
  std::map<Thread, std::deque<Section>> held_;                       // by return time, per thread
  std::map<Thread, std::vector<format::LockInterval>> early_waits_;  // ahead of their call's record
  uint64_t latest_wait_end_ = 0;                                     // of every wait offered
};

}  // namespace incise::recorder
