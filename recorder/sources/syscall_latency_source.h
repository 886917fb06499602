// Syscalls (--syscalls LIST|all): per-call latency from bpf/syscalls.bpf.c,
// sys_enter to sys_exit of the chosen syscalls of target threads, with the
// user stack at entry, as format::Latency rows (histograms with
// --aggregate). The chosen numbers go into a BPF array, so every other
// syscall of the machine costs the two tracepoints an array look-up each.
//
//   if (!config.syscalls.empty()) sources.push_back(makeSyscallLatencySource());
#pragma once

#include <memory>

#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeSyscallLatencySource();

}  // namespace incise::recorder
