// The waits the story does not blame on a lock holder, counted apart so the
// story can say what it left out.
//
// Which waits blame a holder is the wait kind's to say (wait_kind.h,
// decided per row by WaitClassifier, as for `incise locks` and `incise
// waits`): a mutex, rwlock, spinlock or custom lock wait was caused by
// whoever held it. A join, condition variable, semaphore, runtime park (Go's
// notesleep, an idle M) or unknown futex is not: its "releaser" is the
// thread that exited, signalled, posted or unparked, and holds nothing.
//
//   WaitClass wait = classifier.classify(row);
//   if (blamesHolder(wait.kind)) stream.add(classifier.normalized(row, wait));
//   else unblamed.add(row, wait);
//   ...
//   unblamed.finish();   // then unblamed.kinds: "park 325 (385.367 ms), futex 2 (...)"
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/analyses/locks/wait_kind.h"
#include "analyzer/analyses/locks/wait_stats.h"
#include "format/event_kinds.h"

namespace incise::analyzer {

// The waits not blamed on a holder: a count, a total, the longest, and the
// totals per kind.
class UnblamedWaits {
 public:
  void add(const format::LockInterval& row, const WaitClass& wait);
  // Short waits the recorder counted (never on a lock): the longest of them
  // stands as one wait of its max_ns from the summary's start.
  void add(const format::WaitSummary& summary, const WaitClass& wait);
  void finish() { kinds = totals_.kinds(); }

  uint64_t count = 0;
  uint64_t total_ns = 0;
  format::LockInterval longest{};  // valid when count > 0
  WaitKind longest_kind = WaitKind::kFutex;
  std::vector<WaitKindTotals> kinds;  // after finish(), in kAllWaitKinds order

 private:
  WaitStatsBuilder totals_{WaitGrouping::kByObject, {}};
};

}  // namespace incise::analyzer
