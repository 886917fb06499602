// StackNamer: a stack id in a process turned into frame names, root first,
// grouped by function, module or source line — as ids into one NameTable.
//
// Each symbolizer frame is named once: the namer keeps its name id by
// Frame::id in a vector (frames from Symbolizer::lookup live as long as the
// symbolizer and are numbered densely), so naming a stack again costs one
// symbolizer lookup and one vector read per address, and no string is built
// or hashed. Frames come from stackFrames (analyzer/symbolize/stack_frames.h):
// return addresses at address - 1, the recorder's own tracing frames
// dropped, garbage past a broken user stack cut and marked. The symbolizer
// has no line information yet: --by line groups by function and
// lineFallback() says so.
//
//   StackNamer namer(trace, FrameGrouping::kFunction);
//   for (NameId id : namer.rootFirst(pid, stack_id, time)) print(namer.names().name(id));
//   std::vector<std::string> text = namer.rootFirstNames(pid, stack_id, time);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analyzer/model/name_table.h"
#include "analyzer/symbolize/stack_frames.h"
#include "base/status.h"

namespace incise::analyzer {

class Trace;
struct Frame;

enum class FrameGrouping { kFunction, kModule, kLine };

// "function" | "module" | "line"; an error naming the choices otherwise.
Result<FrameGrouping> parseFrameGrouping(const std::string& text);

class StackNamer {
 public:
  StackNamer(Trace& trace, FrameGrouping grouping);
  StackNamer(const StackNamer&) = delete;
  StackNamer& operator=(const StackNamer&) = delete;

  // Name ids, root first; empty for stack id 0 or an id the file does not
  // have. `time` picks the mappings and JIT maps valid then (use the first
  // time the stack was seen). Valid until the next call on this namer.
  std::span<const NameId> rootFirst(uint32_t pid, uint64_t stack_id, uint64_t time);
  // The same path as text, for callers that print one stack at a time.
  std::vector<std::string> rootFirstNames(uint32_t pid, uint64_t stack_id, uint64_t time);
  NameTable& names() { return names_; }
  const NameTable& names() const { return names_; }
  bool lineFallback() const { return grouping_ == FrameGrouping::kLine; }

 private:
  NameId idOf(const Frame& frame);

  Trace& trace_;
  FrameGrouping grouping_;
  NameTable names_;
  static constexpr NameId kUnnamed = UINT32_MAX;
  std::vector<NameId> by_frame_id_;  // kUnnamed until the frame is first named
  std::vector<NameId> path_;         // the last rootFirst() answer
  std::vector<StackFrame> frames_;   // scratch for rootFirst()
};

}  // namespace incise::analyzer
