#include "analyzer/analyses/requests/request_split.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "analyzer/analyses/context/trace_context_timelines.h"
#include "analyzer/analyses/sched/thread_span_split.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {
namespace {

struct ValueSpan {
  ThreadSpan span;
  uint64_t value = 0;
};

// The stretches of non-zero values, clipped to the window, where --where
// holds (at a stretch's middle: another context a condition names changes
// with this one, at the same reads); per thread in time order.
std::vector<ValueSpan> valueSpans(Trace& trace, const ContextTimeline& timeline) {
  const uint64_t window_start = std::max(trace.window().start, trace.startTime());
  const uint64_t window_end = std::min(trace.window().end, trace.endTime());
  std::vector<ValueSpan> spans;
  timeline.forEachStretch([&](const ContextStretch& stretch) {
    if (stretch.value == 0) return;
    const uint64_t start = std::max(stretch.start, window_start);
    const uint64_t end = std::min(stretch.end, window_end);
    if (end <= start || !trace.passesContext(stretch.tid, start + (end - start) / 2)) return;
    spans.push_back({{.tid = stretch.tid, .start = start, .end = end}, stretch.value});
  });
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
  INCISE_ASSIGN_OR_RETURN(ContextTimeline timeline, readContextTimeline(trace, name));
  const std::vector<ValueSpan> spans = valueSpans(trace, timeline);
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

  RequestSplits result{.name = std::string(name), .requests = {}, .values = timeline.text()};
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
