// User functions (--trace BIN:FUNC[+OFFSET]): per-call latency from
// bpf/functions.bpf.c, a uprobe at the start and a uretprobe (C, C++) or a
// uprobe on each RET instruction (Go, or a probe inside the function), with
// the caller's user stack at the start, as format::Latency rows (or
// histograms with --aggregate). A probe the kernel refuses ends the
// recording with an error naming the function. Kernel functions
// (kernel:FUNC) are recorder/sources/kernel_function_source.h's.
//
//   if (hasUserFunctions(config)) sources.push_back(makeFunctionLatencySource());
#pragma once

#include <memory>

#include "recorder/sources/source.h"

namespace incise::recorder {

bool hasUserFunctions(const RecordConfig& config);
std::unique_ptr<Source> makeFunctionLatencySource();

}  // namespace incise::recorder
