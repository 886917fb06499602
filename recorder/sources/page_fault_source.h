// Page faults (--page-faults): the software page-fault event on every
// online CPU, sample period 1 by default (every fault), with the faulting
// data address and kernel + user stacks, from bpf/page_faults.bpf.c, as
// format::PageFault rows. Faults of threads that are not targets are
// dropped in the kernel.
//
//   if (config.page_faults) sources.push_back(makePageFaultSource());
#pragma once

#include <memory>

#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makePageFaultSource();

}  // namespace incise::recorder
