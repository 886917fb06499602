// Filter: which events a report looks at (--pid, --tid, --comm, --cpu, --time,
// --where).
//
// Every set that is empty lets everything through. The time window is in
// nanoseconds relative to the trace start, as the user types it (seconds,
// "1.5..3"); Trace turns it into the file's clock. Comm matching needs thread
// names over time, so the Trace applies it (Filter only holds the names);
// so do --where conditions, which need the context's timeline.
//
//   Filter f;
//   f.pids = {42};
//   auto window = Filter::parseTimeRange("1.5..3");   // Result<RelativeWindow>
//   if (!window) return usage(window.error());
//   f.window = *window;
//   auto where = Filter::parseWhere("req=42,43");      // Result<ContextCondition>
//   f.where.push_back(*where);
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace incise::analyzer {

// [start, end] in ns since the trace start; end == UINT64_MAX means "to the end".
struct RelativeWindow {
  uint64_t start_ns = 0;
  uint64_t end_ns = UINT64_MAX;
};

// --where NAME=VALUE[,VALUE...] (NAME!=VALUE[,...]): events whose thread
// held one of the values (none of them) of context NAME at the event's
// time. A thread whose value is unknown there matches neither form.
struct ContextCondition {
  std::string name;
  std::set<uint64_t> values;
  // An otel trace id typed whole (32 hex digits): its first 8 bytes, by
  // its last 8 (the value, ContextValueText).
  std::map<uint64_t, uint64_t> highs;
  bool negated = false;  // !=
  // `high`: the held trace id's first 8 bytes, where known.
  bool matches(uint64_t value, std::optional<uint64_t> high = std::nullopt) const {
    bool in = values.count(value) != 0;
    if (in) {
      auto typed = highs.find(value);
      in = typed == highs.end() || (high && *high == typed->second);
    }
    return in != negated;
  }
  // As typed, values in decimal (a whole trace id in its 32 digits):
  // "req=42,43", "req!=0".
  std::string text() const;
};

struct Filter {
  std::set<uint32_t> pids;
  std::set<uint32_t> tids;
  std::set<std::string> comms;  // thread or process name, exact
  std::set<uint32_t> cpus;
  std::optional<RelativeWindow> window;
  std::vector<ContextCondition> where;  // all must hold

  bool empty() const {
    return pids.empty() && tids.empty() && comms.empty() && cpus.empty() && !window &&
           where.empty();
  }
  bool matchesCpu(uint64_t cpu) const { return cpus.empty() || cpus.count(uint32_t(cpu)) != 0; }
  bool matchesIds(uint64_t pid, uint64_t tid) const {
    return (pids.empty() || pids.count(uint32_t(pid)) != 0) &&
           (tids.empty() || tids.count(uint32_t(tid)) != 0);
  }

  // "START..END" in seconds from the trace start; either side may be empty
  // ("..2", "1.5.."). Rejects negatives, garbage and END < START.
  static Result<RelativeWindow> parseTimeRange(const std::string& text);
  // "NAME=1,2" or "NAME!=0": a context name and whole numbers (decimal or 0x hex).
  static Result<ContextCondition> parseWhere(const std::string& text);
};

}  // namespace incise::analyzer
