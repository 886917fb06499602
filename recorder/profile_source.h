// CPU samples: perf_event_open per online CPU (cycles when a PMU exists,
// else cpu-clock) at -F HZ, each running bpf/profile.bpf.c.
//
//   sources.push_back(makeProfileSource());
#pragma once

#include <memory>

#include "recorder/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeProfileSource();

}  // namespace incise::recorder
