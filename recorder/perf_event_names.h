// perf's names of the events incise-record can sample (-e) and count
// (--counters): cpu-clock, page-faults, context-switches, cycles, ...
//
//   Result<const PerfEventName*> event = findPerfEvent("-e", "faults");
//   if (!event) return event.error();  // names every known event
//   attr.type = (*event)->type; attr.config = (*event)->config;
//   (*event)->name                      // "page-faults": aliases give the perf name
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace incise::recorder {

struct PerfEventName {
  std::string_view name;   // perf's name, as the trace records it
  std::string_view alias;  // perf's other name; empty when none
  uint32_t type;           // PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE
  uint64_t config;         // PERF_COUNT_SW_* or PERF_COUNT_HW_*
  // A clock counts nanoseconds: a sample stands for its period of time and
  // reports weigh each sample alike; other events weigh by their period.
  bool clock;
  bool hardware() const;
};

// Every event, software first, in the order --help lists them.
std::span<const PerfEventName> knownPerfEvents();

// The event `text` names (perf's name or alias). Unknown: an error naming
// `option` and listing the known events.
Result<const PerfEventName*> findPerfEvent(std::string_view option, std::string_view text);

// --counters LIST: comma-separated names, at most `max_counters`, none twice,
// no clock (a clock's count is stale between its own ticks).
Result<std::vector<const PerfEventName*>> parseCounterList(std::string_view text,
                                                           size_t max_counters);

// "cpu-clock, task-clock, page-faults (faults), ..." for --help and errors.
std::string perfEventList(bool hardware);

}  // namespace incise::recorder
