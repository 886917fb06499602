#include "analyzer/model/stack_namer.h"

#include "analyzer/model/trace.h"
#include "analyzer/symbolize/symbolizer.h"

namespace incise::analyzer {

Result<FrameGrouping> parseFrameGrouping(const std::string& text) {
  if (text == "function") return FrameGrouping::kFunction;
  if (text == "module") return FrameGrouping::kModule;
  if (text == "line") return FrameGrouping::kLine;
  return Error("--by '" + text + "': expected function, module or line");
}

StackNamer::StackNamer(Trace& trace, FrameGrouping grouping) : trace_(trace), grouping_(grouping) {}

const std::vector<std::string>& StackNamer::rootFirst(uint32_t pid, uint64_t stack_id,
                                                      uint64_t time) {
  auto [it, inserted] = cache_.try_emplace(Key{pid, stack_id});
  if (inserted) it->second = rootFirstOnce(pid, stack_id, time);
  return it->second;
}

std::vector<std::string> StackNamer::rootFirstOnce(uint32_t pid, uint64_t stack_id, uint64_t time) {
  std::span<const uint64_t> frames = trace_.stacks().frames(stack_id);
  std::vector<std::string> names;
  names.reserve(frames.size());
  for (size_t i = frames.size(); i-- > 0;) {
    uint64_t address = i == 0 || frames[i] == 0 ? frames[i] : frames[i] - 1;
    const Frame& frame = trace_.symbolizer().lookup(pid, address, time);
    if (grouping_ == FrameGrouping::kModule) {
      names.push_back(frame.module.empty() ? "[unknown]" : frame.module);
    } else {
      names.push_back(frame.name);
    }
  }
  return names;
}

}  // namespace incise::analyzer
