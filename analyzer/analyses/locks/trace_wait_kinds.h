// WaitClassifier: the wait kind (analyzer/analyses/locks/wait_kind.h) of each lock
// row of a trace, with the frames of each wait stack named once.
//
// The one place a report asks what a lock row waited for. Rules that read
// the stack (the C library entry point, a runtime's parking functions) name
// the wait's user frames through the trace's symbolizer, once per (process,
// stack); a holder the kernel did not check is kept only if the trace knows
// it as a thread of the waiter's process.
//
//   WaitClassifier waits(trace);
//   TimeOrderedRows<format::LockInterval> rows(trace);
//   for (const format::LockInterval* row; (row = rows.peek()) != nullptr; rows.pop()) {
//     WaitClass wait = waits.classify(*row);
//     if (!blamesHolder(wait.kind)) continue;   // correlate: not a lock
//     format::LockInterval lock = *row;
//     lock.address = wait.object;               // one group per rwlock, not per futex word
//     stream.add(lock);
//   }
#pragma once

#include <cstdint>
#include <unordered_map>

#include "analyzer/analyses/locks/wait_kind.h"
#include "format/event_kinds.h"

namespace incise::analyzer {

class Trace;

class WaitClassifier {
 public:
  explicit WaitClassifier(Trace& trace);
  WaitClass classify(const format::LockInterval& row);
  // The row as lock analyses take it: address = the object (so the three
  // futex words of one rwlock are one lock), holder_tid checked.
  format::LockInterval normalized(const format::LockInterval& row, const WaitClass& wait) const;

 private:
  const WaitFrames& framesOf(uint64_t pid, uint64_t stack_id, uint64_t time);

  Trace& trace_;
  std::unordered_map<uint64_t, WaitFrames> frames_;  // by pid << 40 ^ stack id
};

}  // namespace incise::analyzer
