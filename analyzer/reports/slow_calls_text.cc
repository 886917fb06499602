#include "analyzer/reports/slow_calls_text.h"

#include <cstdio>

#include "analyzer/analyses/latency/latency_names.h"
#include "analyzer/model/stack_namer.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/lock_report_text.h"
#include "analyzer/reports/stack_text.h"

namespace incise::analyzer {
namespace {

std::string shareText(uint64_t ns, uint64_t total) {
  if (ns == 0) return "-";
  return formatDurationNs(ns) + " (" +
         formatPercent(total ? 100.0 * static_cast<double>(ns) / static_cast<double>(total) : 0) +
         "%)";
}

std::string secondsText(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f s", static_cast<double>(ns) / 1e9);
  return text;
}

std::string releaserText(Trace& trace, const SlowCallSplit& call) {
  if (call.lock_wait_ns == 0) return "";
  if (call.lock_releaser_tid == 0) return "unknown";
  return std::to_string(call.lock_releaser_tid) + " " +
         trace.threadName(static_cast<uint32_t>(call.lock_releaser_tid), call.start);
}

}  // namespace

void printSlowCalls(Trace& trace, const std::vector<SlowCallSplit>& calls, std::ostream& out) {
  out << "\nslow calls: where the " << calls.size()
      << " slowest timed calls spent their time (their threads' states from entry to return)\n";
  LatencyNames names(trace.reader().metadata());
  Table table({{"CALL", Align::kLeft, 32},
               {"THREAD", Align::kLeft, 24},
               {"AT", Align::kRight},
               {"TOTAL", Align::kRight},
               {"ON-CPU", Align::kRight},
               {"RUNNABLE", Align::kRight},
               {"LOCK WAIT", Align::kRight},
               {"BLOCKED", Align::kRight},
               {"UNOBSERVED", Align::kRight},
               {"LOCK RELEASED BY", Align::kLeft, 32}});
  bool summarized = false;
  for (const SlowCallSplit& c : calls) {
    summarized = summarized || c.short_blocks_summarized;
    table.addRow({names.name(c.source, c.probe, c.detail) + (c.short_blocks_summarized ? " *" : ""),
                  std::to_string(c.tid) + " " + trace.threadName(c.tid, c.start),
                  secondsText(trace.sinceStart(c.start)), formatDurationNs(c.duration_ns),
                  shareText(c.on_cpu_ns, c.duration_ns), shareText(c.runnable_ns, c.duration_ns),
                  shareText(c.lock_wait_ns, c.duration_ns), shareText(c.blocked_ns, c.duration_ns),
                  shareText(c.unobserved_ns, c.duration_ns), releaserText(trace, c)});
  }
  table.render(out);
  if (summarized) {
    out << "* the thread had short blocks counted, not written, inside the call "
           "(--sched-min-block): its on-CPU time may include them\n";
  }
}

nlohmann::json slowCallsJson(Trace& trace, const std::vector<SlowCallSplit>& calls) {
  LatencyNames names(trace.reader().metadata());
  StackNamer namer(trace, FrameGrouping::kFunction);
  nlohmann::json rows = nlohmann::json::array();
  for (const SlowCallSplit& c : calls) {
    rows.push_back({{"name", names.name(c.source, c.probe, c.detail)},
                    {"kind", format::latencySourceName(c.source)},
                    {"pid", c.pid},
                    {"tid", c.tid},
                    {"thread", trace.threadName(c.tid, c.start)},
                    {"start_ns", trace.sinceStart(c.start)},
                    {"duration_ns", c.duration_ns},
                    {"on_cpu_ns", c.on_cpu_ns},
                    {"runnable_ns", c.runnable_ns},
                    {"lock_wait_ns", c.lock_wait_ns},
                    {"blocked_ns", c.blocked_ns},
                    {"unobserved_ns", c.unobserved_ns},
                    {"lock_releaser_tid", c.lock_releaser_tid},
                    {"lock_address", hexAddress(c.lock_address)},
                    {"short_blocks_summarized", c.short_blocks_summarized},
                    {"stack", stackLine(namer.rootFirstNames(c.pid, c.stack_id, c.start))}});
  }
  return rows;
}

}  // namespace incise::analyzer
