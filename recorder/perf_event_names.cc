#include "recorder/perf_event_names.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <array>

namespace incise::recorder {

namespace {

constexpr uint32_t kSoftware = PERF_TYPE_SOFTWARE;
constexpr uint32_t kHardware = PERF_TYPE_HARDWARE;

constexpr std::array<PerfEventName, 19> kEvents = {{
    {"cpu-clock", "", kSoftware, PERF_COUNT_SW_CPU_CLOCK, true},
    {"task-clock", "", kSoftware, PERF_COUNT_SW_TASK_CLOCK, true},
    {"page-faults", "faults", kSoftware, PERF_COUNT_SW_PAGE_FAULTS, false},
    {"minor-faults", "", kSoftware, PERF_COUNT_SW_PAGE_FAULTS_MIN, false},
    {"major-faults", "", kSoftware, PERF_COUNT_SW_PAGE_FAULTS_MAJ, false},
    {"context-switches", "cs", kSoftware, PERF_COUNT_SW_CONTEXT_SWITCHES, false},
    {"cpu-migrations", "migrations", kSoftware, PERF_COUNT_SW_CPU_MIGRATIONS, false},
    {"alignment-faults", "", kSoftware, PERF_COUNT_SW_ALIGNMENT_FAULTS, false},
    {"emulation-faults", "", kSoftware, PERF_COUNT_SW_EMULATION_FAULTS, false},
    {"cycles", "cpu-cycles", kHardware, PERF_COUNT_HW_CPU_CYCLES, false},
    {"instructions", "", kHardware, PERF_COUNT_HW_INSTRUCTIONS, false},
    {"cache-references", "", kHardware, PERF_COUNT_HW_CACHE_REFERENCES, false},
    {"cache-misses", "", kHardware, PERF_COUNT_HW_CACHE_MISSES, false},
    {"branch-instructions", "branches", kHardware, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, false},
    {"branch-misses", "", kHardware, PERF_COUNT_HW_BRANCH_MISSES, false},
    {"bus-cycles", "", kHardware, PERF_COUNT_HW_BUS_CYCLES, false},
    {"stalled-cycles-frontend", "idle-cycles-frontend", kHardware,
     PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, false},
    {"stalled-cycles-backend", "idle-cycles-backend", kHardware,
     PERF_COUNT_HW_STALLED_CYCLES_BACKEND, false},
    {"ref-cycles", "", kHardware, PERF_COUNT_HW_REF_CPU_CYCLES, false},
}};

}  // namespace

bool PerfEventName::hardware() const {
  return type == kHardware;
}

std::span<const PerfEventName> knownPerfEvents() {
  return kEvents;
}

std::string perfEventList(bool hardware) {
  std::string out;
  for (const PerfEventName& event : kEvents) {
    if (event.hardware() != hardware) continue;
    if (!out.empty()) out += ", ";
    out += event.name;
    if (!event.alias.empty()) out += " (" + std::string(event.alias) + ")";
  }
  return out;
}

Result<const PerfEventName*> findPerfEvent(std::string_view option, std::string_view text) {
  auto found = std::find_if(kEvents.begin(), kEvents.end(), [&](const PerfEventName& event) {
    return event.name == text || (!event.alias.empty() && event.alias == text);
  });
  if (found != kEvents.end()) return &*found;
  return Error(ErrorCode::kInvalidArgument,
               std::string(option) + " " + std::string(text) +
                   ": unknown event; software events: " + perfEventList(false) +
                   "; hardware events (need a PMU): " + perfEventList(true));
}

Result<std::vector<const PerfEventName*>> parseCounterList(std::string_view text,
                                                           size_t max_counters) {
  std::vector<const PerfEventName*> counters;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string_view name = text.substr(start, comma - start);
    start = comma + 1;
    if (name.empty()) return Error(ErrorCode::kInvalidArgument, "--counters: an empty name");
    INCISE_ASSIGN_OR_RETURN(const PerfEventName* event, findPerfEvent("--counters", name));
    if (event->clock) {
      return Error(ErrorCode::kInvalidArgument,
                   "--counters " + std::string(name) +
                       ": a clock is not counted per sample (sample by it with -e instead)");
    }
    if (std::find(counters.begin(), counters.end(), event) != counters.end()) {
      return Error(ErrorCode::kInvalidArgument,
                   "--counters " + std::string(event->name) + ": given twice");
    }
    counters.push_back(event);
  }
  if (counters.size() > max_counters) {
    return Error(ErrorCode::kInvalidArgument, "--counters: " + std::to_string(counters.size()) +
                                                  " counters; at most " +
                                                  std::to_string(max_counters));
  }
  return counters;
}

}  // namespace incise::recorder
