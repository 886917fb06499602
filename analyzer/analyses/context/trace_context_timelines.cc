#include "analyzer/analyses/context/trace_context_timelines.h"

#include <unordered_map>

#include "analyzer/analyses/sched/thread_span_split.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {
namespace {

std::unordered_multimap<uint32_t, uint64_t> threadExits(Trace& trace) {
  std::unordered_multimap<uint32_t, uint64_t> exits;
  trace.forEachRow<format::ProcessEvent>([&](const format::ProcessEvent& row) {
    if (row.event == static_cast<uint64_t>(format::ProcessEventType::kExit))
      exits.emplace(static_cast<uint32_t>(row.tid), row.time);
  });
  return exits;
}

// The timelines of the slots `wanted` says (by slot; the others empty).
std::vector<ContextTimeline> readTimelines(Trace& trace, const std::vector<bool>& wanted) {
  std::vector<std::vector<format::ContextChange>> rows(wanted.size());
  trace.forEachRow<format::ContextChange>([&](const format::ContextChange& row) {
    if (row.slot < wanted.size() && wanted[row.slot]) rows[row.slot].push_back(row);
  });
  // A thread's reads follow each other, so the windows of one slot's rows
  // of a thread do not overlap (onCpuPieces' contract); another slot's may:
  // a replay per slot that has rows.
  std::vector<std::vector<std::vector<TimeRange>>> ran;
  for (const auto& slot_rows : rows) {
    std::vector<ThreadSpan> windows;
    windows.reserve(slot_rows.size());
    for (const format::ContextChange& row : slot_rows) {
      const TimeRange window = ContextTimeline::changeWindow(row);
      windows.push_back(
          {.tid = static_cast<uint32_t>(row.tid), .start = window.start, .end = window.end});
    }
    ran.push_back(onCpuPieces(trace, windows));
  }
  const auto exits = threadExits(trace);
  std::vector<ContextTimeline> timelines;
  const std::vector<format::ContextVariable>& contexts = trace.header().options.contexts;
  for (size_t slot = 0; slot < rows.size(); ++slot) {
    ContextValueText text =
        slot < contexts.size() ? ContextValueText::of(contexts[slot]) : ContextValueText();
    timelines.push_back(ContextTimeline::build(rows[slot], ran[slot], exits, std::move(text)));
  }
  return timelines;
}

}  // namespace

Result<ContextTimeline> readContextTimeline(Trace& trace, std::string_view name) {
  INCISE_ASSIGN_OR_RETURN(size_t slot, contextSlot(trace.header(), name));
  std::vector<bool> wanted(slot + 1, false);
  wanted[slot] = true;
  return std::move(readTimelines(trace, wanted)[slot]);
}

std::vector<ContextTimeline> readContextTimelines(Trace& trace) {
  return readTimelines(trace, std::vector<bool>(trace.header().options.contexts.size(), true));
}

Status holdToWhere(Trace& trace) {
  const std::vector<ContextCondition>& where = trace.options().filter.where;
  if (where.empty()) return Status();
  std::vector<ContextTimeline> timelines;
  for (const ContextCondition& condition : where) {
    Result<ContextTimeline> timeline = readContextTimeline(trace, condition.name);
    if (!timeline) return timeline.error().context("--where " + condition.name);
    timelines.push_back(timeline.take());
  }
  trace.restrictToContexts(std::move(timelines));
  return Status();
}

}  // namespace incise::analyzer
