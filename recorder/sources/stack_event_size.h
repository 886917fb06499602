// The checked size of a ring-buffer record that ends with a struct
// event_stack (bpf/events.h): the bytes before its frames plus the frames it
// claims, or 0 when the record is shorter than that or claims too many.
// Shared by every source whose records carry a stack.
//
//   if (stackEventSize(*e, size) != 0) onAcquire(*e);   // e: const lock_event*
#pragma once

#include <cstddef>
#include <cstdint>

#include "bpf/events.h"

namespace incise::recorder {

template <typename Event>
size_t stackEventSize(const Event& e, size_t size) {
  constexpr size_t stack_offset = offsetof(Event, stack) + offsetof(event_stack, frames);
  if (size < stack_offset) return 0;
  if (e.stack.kernel_count > MAX_STACK_DEPTH || e.stack.user_count > MAX_STACK_DEPTH) return 0;
  size_t frames = size_t{e.stack.kernel_count} + e.stack.user_count;
  size_t needed = stack_offset + frames * sizeof(uint64_t);
  return needed <= size ? needed : 0;
}

}  // namespace incise::recorder
