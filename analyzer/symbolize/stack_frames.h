// stackFrames: the one way a stored stack becomes symbolized frames, so every
// report, flame graph, diff and export shows the same frames.
//
// A stored stack is leaf first: the kernel frames, then the user frames.
// Return addresses (every frame but the leaf) are looked up at address - 1,
// so a call that is a function's last instruction is charged to it, not to
// the next function. Two kinds of frames never reach a report:
//
//  - the tracing machinery that took the stack: a kernel stack taken from a
//    tracepoint's BPF program starts in that program (`bpf_prog_…`, or an
//    unnamed JIT address in module space) and the code that ran it
//    (`bpf_trace_run4`, `__bpf_trace_sched_switch`, `__traceiter_…`); that
//    leading run is dropped, up to its last named machinery frame.
//  - garbage past the end of a user stack: a frame-pointer walk through code
//    without frame pointers reads words that are not return addresses. The
//    stack is cut at the first user frame below 4096 (0x0 ends most broken
//    chains) or, past the user leaf, outside every executable mapping, and
//    the cut is marked with one `[stack cut]` frame at the root end.
//
//   std::vector<StackFrame> frames;
//   stackFrames(symbolizer, pid, stacks.frames(stack_id), time, frames);
//   for (const StackFrame& f : frames) print(f.frame->name, f.address);  // leaf first
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace incise::analyzer {

class Symbolizer;
struct Frame;

struct StackFrame {
  const Frame* frame = nullptr;  // lives as long as the symbolizer
  uint64_t address = 0;          // the address looked up (a return address - 1)
};

inline constexpr std::string_view kStackCutName = "[stack cut]";

// Fills `out` (cleared first) with `addresses`' frames, leaf first.
void stackFrames(Symbolizer& symbolizer, uint32_t pid, std::span<const uint64_t> addresses,
                 uint64_t time, std::vector<StackFrame>& out);

}  // namespace incise::analyzer
