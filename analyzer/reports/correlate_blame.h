// Which waits the story blames on a lock holder, and the others, counted
// apart so the story can say what it left out.
//
// A wait on a mutex, rwlock, spinlock or custom lock was caused by whoever
// held it. A join, condition variable, semaphore or runtime park is not:
// its "releaser" is the thread that exited, signalled, posted or unparked,
// and holds nothing. Today the rows tell these apart only by LockKind:
//  - mutex, rwlock, spin and custom rows blame their holder;
//  - a futex row (kFutex) blames one in a trace recorded with `--locks
//    contended`, where every row is a futex wait and most are on mutexes;
//    in one recorded with `--locks all` the lock calls have rows of their
//    own, so a futex row is some other wait (pthread_join, a condition
//    variable, a semaphore) and blames no one.
//
//   WaitBlame blame(trace.header().options.lock_mode);
//   if (blame.blamesHolder(row)) stream.add(row); else others.add(row);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "format/event_kinds.h"

namespace incise::analyzer {

class WaitBlame {
 public:
  // The trace header's lock mode: "all", "contended" or "off".
  explicit WaitBlame(std::string_view recorded_lock_mode);
  bool blamesHolder(const format::LockInterval& row) const;
  // "futex waits outside the recorded lock calls (...)": what `count` others are.
  static std::string othersDescription(uint64_t count);

 private:
  bool lock_calls_recorded_;
};

// The waits not blamed on a holder, as a count, a total and the longest.
struct UnblamedWaits {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  format::LockInterval longest{};  // valid when count > 0

  void add(const format::LockInterval& row);
};

}  // namespace incise::analyzer
