// UnwoundStacks: the stack table reports see for a -g dwarf / hybrid trace.
//
// Samples that carry user registers and a stack copy are unwound offline
// (analyzer/unwind/) as they stream past; the unwound user frames replace
// the frame-pointer user frames of that sample (the kernel frames stay), and
// the result is interned into a table that holds every stack of the file
// under its own id plus the new stacks after them. Reports keep reading
// `stack_id` and `Trace::stacks()` and never know which mode recorded.
//
//   UnwoundStacks unwound(reader);        // only when header stack_mode is dwarf/hybrid
//   row.stack_id = unwound.stackFor(row, chunk.bytes(format::CpuSampleColumn::user_stack, i));
//   unwound.stacks().frames(row.stack_id);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/unwind/unwinder.h"
#include "format/event_kinds.h"
#include "format/reader.h"

namespace incise::analyzer {

class UnwoundStacks {
 public:
  explicit UnwoundStacks(const format::Reader& reader);

  // True for traces recorded with -g dwarf or -g hybrid.
  static bool wanted(const format::Header& header);

  // The id (in stacks()) of `row`'s stack with its user part unwound; the
  // row's own id when it has no registers (a frame-pointer sample).
  uint64_t stackFor(const format::CpuSample& row, std::span<const uint8_t> user_stack);

  const format::StackTable& stacks() const { return stacks_; }
  const UnwindCounters& counters() const { return unwinder_.counters(); }

 private:
  struct FramesHash {
    size_t operator()(const std::vector<uint64_t>& frames) const;
  };

  const format::Reader& reader_;
  bool hybrid_ = false;
  Unwinder unwinder_;
  format::StackTable stacks_;
  uint64_t next_id_ = 1;
  std::unordered_map<std::vector<uint64_t>, uint64_t, FramesHash> new_ids_;
  std::vector<uint64_t> scratch_;
};

}  // namespace incise::analyzer
