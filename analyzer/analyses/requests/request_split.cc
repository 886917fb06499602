#include "analyzer/analyses/requests/request_split.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "analyzer/analyses/sched/thread_span_split.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {
namespace {

struct Change {
  uint64_t at = 0;  // where the value is taken to start
  uint64_t value = 0;
};

Result<uint64_t> slotOf(const Trace& trace, std::string_view name) {
  const auto& contexts = trace.header().options.contexts;
  std::string known;
  for (size_t slot = 0; slot < contexts.size(); ++slot) {
    if (contexts[slot].name == name) return uint64_t{slot};
    known += (known.empty() ? "" : ", ") + contexts[slot].name;
  }
  if (known.empty())
    return Error("the trace has no context values (record with --context " + std::string(name) +
                 "=SYMBOL)");
  return Error("the trace has no context '" + std::string(name) + "' (it has: " + known + ")");
}

// Where the change to a row's value is taken to be: the thread writes its
// own variable, so between `since` and `time` it changed while the thread
// ran; halfway through the thread's on-CPU time there (halfway between
// the two reads when no run is known, `time` for a first read).
uint64_t changeTime(const format::ContextChange& row, const std::vector<TimeRange>& ran) {
  if (row.since == 0 || row.since > row.time) return row.time;
  uint64_t on_cpu = 0;
  for (const TimeRange& piece : ran) on_cpu += piece.end - piece.start;
  if (on_cpu == 0) return row.since + (row.time - row.since) / 2;
  uint64_t half = on_cpu / 2;
  for (const TimeRange& piece : ran) {
    if (half <= piece.end - piece.start) return piece.start + half;
    half -= piece.end - piece.start;
  }
  return row.time;
}

// Each thread's changes of the context, in time order.
std::unordered_map<uint32_t, std::vector<Change>> changesByThread(Trace& trace, uint64_t slot) {
  std::vector<format::ContextChange> rows;
  trace.forEachRow<format::ContextChange>([&](const format::ContextChange& row) {
    if (row.slot == slot) rows.push_back(row);
  });
  // A thread's reads follow each other: the windows of one thread do not overlap.
  std::vector<ThreadSpan> windows;
  windows.reserve(rows.size());
  for (const format::ContextChange& row : rows) {
    const bool bounded = row.since != 0 && row.since < row.time;
    windows.push_back({.tid = static_cast<uint32_t>(row.tid),
                       .start = bounded ? row.since : row.time,
                       .end = row.time});
  }
  const std::vector<std::vector<TimeRange>> ran = onCpuPieces(trace, windows);
  std::unordered_map<uint32_t, std::vector<Change>> changes;
  for (size_t i = 0; i < rows.size(); ++i)
    changes[static_cast<uint32_t>(rows[i].tid)].push_back(
        {changeTime(rows[i], ran[i]), rows[i].value});
  for (auto& [tid, list] : changes) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Change& a, const Change& b) { return a.at < b.at; });
  }
  return changes;
}

std::unordered_map<uint32_t, uint64_t> threadExits(Trace& trace) {
  std::unordered_map<uint32_t, uint64_t> exits;
  trace.forEachRow<format::ProcessEvent>([&](const format::ProcessEvent& row) {
    if (row.event == static_cast<uint64_t>(format::ProcessEventType::kExit))
      exits[static_cast<uint32_t>(row.tid)] = row.time;
  });
  return exits;
}

struct ValueSpan {
  ThreadSpan span;
  uint64_t value = 0;
};

// The spans of non-zero values, clipped to the window; per thread in time order.
std::vector<ValueSpan> valueSpans(Trace& trace, uint64_t slot) {
  const auto changes = changesByThread(trace, slot);
  const auto exits = threadExits(trace);
  const uint64_t window_start = std::max(trace.window().start, trace.startTime());
  const uint64_t window_end = std::min(trace.window().end, trace.endTime());
  std::vector<ValueSpan> spans;
  for (const auto& [tid, list] : changes) {
    auto exit = exits.find(tid);
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].value == 0) continue;
      uint64_t end = i + 1 < list.size()                                 ? list[i + 1].at
                     : exit != exits.end() && exit->second >= list[i].at ? exit->second
                                                                         : trace.endTime();
      const uint64_t start = std::max(list[i].at, window_start);
      end = std::min(end, window_end);
      if (end <= start) continue;
      spans.push_back({{.tid = tid, .start = start, .end = end}, list[i].value});
    }
  }
  return spans;
}

// Page faults per span: faults of the span's thread inside it.
std::vector<uint64_t> faultsPerSpan(Trace& trace, const std::vector<ValueSpan>& spans) {
  std::unordered_map<uint32_t, std::vector<size_t>> by_tid;  // span indices, by start
  for (size_t i = 0; i < spans.size(); ++i) by_tid[spans[i].span.tid].push_back(i);
  for (auto& [tid, indices] : by_tid) {
    std::sort(indices.begin(), indices.end(),
              [&](size_t a, size_t b) { return spans[a].span.start < spans[b].span.start; });
  }
  std::vector<uint64_t> faults(spans.size(), 0);
  trace.forEachRow<format::PageFault>([&](const format::PageFault& row) {
    auto found = by_tid.find(static_cast<uint32_t>(row.tid));
    if (found == by_tid.end()) return;
    const std::vector<size_t>& indices = found->second;
    // The last span starting at or before the fault.
    auto after =
        std::upper_bound(indices.begin(), indices.end(), row.time,
                         [&](uint64_t time, size_t i) { return time < spans[i].span.start; });
    if (after == indices.begin()) return;
    const size_t index = *(after - 1);
    if (row.time < spans[index].span.end) ++faults[index];
  });
  return faults;
}

}  // namespace

Result<RequestSplits> splitRequests(Trace& trace, std::string_view name) {
  INCISE_ASSIGN_OR_RETURN(uint64_t slot, slotOf(trace, name));
  const std::vector<ValueSpan> spans = valueSpans(trace, slot);
  std::vector<ThreadSpan> thread_spans;
  thread_spans.reserve(spans.size());
  for (const ValueSpan& span : spans) thread_spans.push_back(span.span);
  const std::vector<ThreadSpanSplit> splits = splitThreadSpans(trace, thread_spans);
  const std::vector<uint64_t> faults = faultsPerSpan(trace, spans);

  struct Sums {
    RequestSplit request;
    std::set<uint32_t> threads;
    std::map<uint64_t, uint64_t> lock_wait_by_releaser;
  };
  std::map<uint64_t, Sums> by_value;
  for (size_t i = 0; i < spans.size(); ++i) {
    const ValueSpan& span = spans[i];
    const ThreadSpanSplit& split = splits[i];
    Sums& sums = by_value[span.value];
    RequestSplit& request = sums.request;
    if (sums.threads.empty() || span.span.start < request.start) request.start = span.span.start;
    request.end = std::max(request.end, span.span.end);
    sums.threads.insert(span.span.tid);
    addSpanTimes(request, split);
    request.page_faults += faults[i];
    if (split.lock_releaser_tid != 0)
      sums.lock_wait_by_releaser[split.lock_releaser_tid] += split.lock_wait_ns;
  }

  RequestSplits result{.name = std::string(name), .requests = {}};
  result.requests.reserve(by_value.size());
  for (auto& [value, sums] : by_value) {
    RequestSplit& request = sums.request;
    request.value = value;
    request.wall_ns = request.end - request.start;
    request.threads.assign(sums.threads.begin(), sums.threads.end());
    uint64_t longest = 0;
    for (const auto& [tid, ns] : sums.lock_wait_by_releaser) {
      if (ns > longest) {
        longest = ns;
        request.lock_releaser_tid = tid;
      }
    }
    result.requests.push_back(std::move(request));
  }
  std::sort(result.requests.begin(), result.requests.end(),
            [](const RequestSplit& a, const RequestSplit& b) {
              if (a.wall_ns != b.wall_ns) return a.wall_ns > b.wall_ns;
              return a.value < b.value;
            });
  return result;
}

}  // namespace incise::analyzer
