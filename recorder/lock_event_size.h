// The checked size of a struct lock_event record (bpf/locks.h) from a ring
// buffer: the bytes before its stack plus the frames it claims, or 0 when the
// record is shorter than that. Shared by every source that sends lock events.
//
//   if (lockEventSize(*e, size) != 0) onAcquire(*e);
#pragma once

#include <cstddef>
#include <cstdint>

#include "bpf/locks.h"

namespace incise::recorder {

inline size_t lockEventSize(const lock_event& e, size_t size) {
  constexpr size_t stack_offset = offsetof(lock_event, stack) + offsetof(event_stack, frames);
  if (size < stack_offset) return 0;
  size_t frames = size_t{e.stack.kernel_count} + e.stack.user_count;
  if (e.stack.kernel_count > MAX_STACK_DEPTH || e.stack.user_count > MAX_STACK_DEPTH) return 0;
  size_t needed = stack_offset + frames * sizeof(uint64_t);
  return needed <= size ? needed : 0;
}

}  // namespace incise::recorder
