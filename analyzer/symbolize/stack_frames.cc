#include "analyzer/symbolize/stack_frames.h"

#include "analyzer/symbolize/symbolizer.h"
#include "format/event_kinds.h"

namespace incise::analyzer {
namespace {

// The first 4 KiB are never mapped: such a "return address" is the end of a
// broken chain, never code.
constexpr uint64_t kFirstMappablePage = 4096;

}  // namespace

void stackFrames(Symbolizer& symbolizer, uint32_t pid, std::span<const uint64_t> addresses,
                 uint64_t time, std::vector<StackFrame>& out) {
  out.clear();
  out.reserve(addresses.size());
  auto lookupAddress = [&](size_t i) {
    return i == 0 || addresses[i] == 0 ? addresses[i] : addresses[i] - 1;
  };

  // The leading run of machinery (named, or unnamed kernel code such as a
  // JIT image), dropped up to its last named machinery frame.
  size_t first = 0;
  for (size_t i = 0; i < addresses.size() && format::isKernelAddress(addresses[i]); ++i) {
    const Frame& frame = symbolizer.lookup(pid, lookupAddress(i), time);
    if (frame.tracing_machinery) {
      first = i + 1;
    } else if (frame.known()) {
      break;
    }
  }

  bool in_user = false;
  for (size_t i = first; i < addresses.size(); ++i) {
    const bool kernel = format::isKernelAddress(addresses[i]);
    const bool user_leaf = !kernel && !in_user;
    in_user |= !kernel;
    if (!kernel && addresses[i] < kFirstMappablePage) {
      out.push_back({&symbolizer.stackCut(), addresses[i]});
      return;
    }
    const uint64_t address = lookupAddress(i);
    const Frame& frame = symbolizer.lookup(pid, address, time);
    // The user leaf is where the CPU was, code even when no mapping says so
    // (a mapping the recorder missed); a return address outside code is not.
    if (!kernel && !user_leaf && frame.outside_code) {
      out.push_back({&symbolizer.stackCut(), address});
      return;
    }
    out.push_back({&frame, address});
  }
}

}  // namespace incise::analyzer
