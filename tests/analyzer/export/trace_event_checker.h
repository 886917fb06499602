// A strict checker of Chrome Trace Event JSON, as chrome://tracing,
// Perfetto's JSON importer and speedscope read it, for the export tests.
//
// Beyond the required fields of each phase, it checks what viewers silently
// get wrong: slices of one thread must nest exactly in float64 — viewers turn
// "X" into begin/end pairs at ts and ts + dur, so an end that overruns the
// next ts by 1e-7 µs makes them nest the next slice inside — every CPU sample
// lies inside a "running" slice of its own thread, and every process and
// thread with an event is named (non-empty), once.
//
//   TraceEventCheck check = checkTraceEvents(nlohmann::json::parse(text));
//   EXPECT_TRUE(check.ok()) << check.summary();
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace incise::analyzer::testing {

struct TraceEventCheck {
  // Violation kind -> how many, and a few examples.
  std::map<std::string, uint64_t> counts;
  std::map<std::string, std::vector<std::string>> examples;
  uint64_t events = 0;
  uint64_t slices = 0;   // X and B/E pairs on thread tracks
  uint64_t samples = 0;  // instants of category "cpu"

  bool ok() const { return counts.empty(); }
  std::string summary() const;
  void add(const std::string& kind, const std::string& example);
};

TraceEventCheck checkTraceEvents(const nlohmann::json& doc);

}  // namespace incise::analyzer::testing
