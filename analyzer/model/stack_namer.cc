#include "analyzer/model/stack_namer.h"

#include <algorithm>

#include "analyzer/model/trace.h"
#include "analyzer/symbolize/stack_frames.h"
#include "analyzer/symbolize/symbolizer.h"

namespace incise::analyzer {

Result<FrameGrouping> parseFrameGrouping(const std::string& text) {
  if (text == "function") return FrameGrouping::kFunction;
  if (text == "module") return FrameGrouping::kModule;
  if (text == "line") return FrameGrouping::kLine;
  return Error("--by '" + text + "': expected function, module or line");
}

StackNamer::StackNamer(Trace& trace, FrameGrouping grouping) : trace_(trace), grouping_(grouping) {}

std::span<const NameId> StackNamer::rootFirst(uint32_t pid, uint64_t stack_id, uint64_t time) {
  stackFrames(trace_.symbolizer(), pid, trace_.stacks().frames(stack_id), time, frames_);
  path_.clear();
  path_.reserve(frames_.size());
  for (size_t i = frames_.size(); i-- > 0;) path_.push_back(idOf(*frames_[i].frame));
  return path_;
}

std::vector<std::string> StackNamer::rootFirstNames(uint32_t pid, uint64_t stack_id,
                                                    uint64_t time) {
  return names_.names(rootFirst(pid, stack_id, time));
}

NameId StackNamer::idOf(const Frame& frame) {
  if (frame.id >= by_frame_id_.size()) {
    by_frame_id_.resize(std::max<size_t>(frame.id + 1, 2 * by_frame_id_.size()), kUnnamed);
  }
  NameId& id = by_frame_id_[frame.id];
  if (id == kUnnamed) {
    bool by_module = grouping_ == FrameGrouping::kModule;
    // Frames outlive the namer (the trace's symbolizer keeps them): their
    // text is referenced, not copied.
    if (!by_module) {
      id = names_.internKept(frame.name);
    } else {
      id = frame.module.empty() ? names_.intern("[unknown]") : names_.internKept(frame.module);
    }
  }
  return id;
}

}  // namespace incise::analyzer
