// CPU samples: perf_event_open per online CPU, or per thread of -p and
// -- CMD targets, of the sampling event (-e; cycles when a PMU exists, else
// cpu-clock) at -F HZ or every -c N events, with the --counters in its
// group; each runs bpf/profile.bpf.c.
//
//   if (Status s = checkSamplingEvents(config); !s) fail(s.message());  // before any output
//   sources.push_back(makeProfileSource());
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "recorder/record_config.h"
#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeProfileSource();

// perf's name of the sampling event: -e's, else "cycles" when a hardware PMU
// can sample, else "cpu-clock" (probed on cpu 0).
std::string sampleEventName(const RecordConfig& config);

// Whether the sampling event and the --counters group open on cpu 0: a
// hardware event without a PMU is named with what to use instead.
Status checkSamplingEvents(const RecordConfig& config);

}  // namespace incise::recorder
