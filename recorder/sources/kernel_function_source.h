// Kernel functions (--trace kernel:FUNC): fentry to fexit through
// bpf/kernel_functions.bpf.c, one loaded copy per function. Kernels that
// refuse fentry/fexit (the load fails with EPERM, as on some virtualised or
// locked-down kernels) and have no kprobes cannot time kernel functions at
// all: the recorder says so, notes it in the trace, and records the rest.
//
//   if (hasKernelFunctions(config)) sources.push_back(makeKernelFunctionSource());
#pragma once

#include <memory>

#include "recorder/sources/source.h"

namespace incise::recorder {

bool hasKernelFunctions(const RecordConfig& config);
std::unique_ptr<Source> makeKernelFunctionSource();

}  // namespace incise::recorder
