// CPU samples: perf_event_open per online CPU (cycles when a PMU exists,
// else cpu-clock) at -F HZ, each running bpf/profile.bpf.c.
//
//   sources.push_back(makeProfileSource());
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeProfileSource();

// "cycles" when a hardware PMU can sample, else "cpu-clock" (probed on cpu 0).
std::string sampleEventName(uint32_t frequency_hz);

}  // namespace incise::recorder
