#include "analyzer/analyses/latency/slow_call_split.h"

#include <algorithm>

#include "analyzer/analyses/sched/thread_span_split.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {
namespace {

// Slower first; among equal durations the earlier.
bool slower(const SlowCallSplit& a, const SlowCallSplit& b) {
  if (a.duration_ns != b.duration_ns) return a.duration_ns > b.duration_ns;
  return a.start < b.start;
}

std::vector<SlowCallSplit> slowestCalls(Trace& trace, size_t count) {
  std::vector<SlowCallSplit> heap;  // the kept calls; ordered by `slower`, front: the least slow
  trace.forEachRow<format::Latency>([&](const format::Latency& row) {
    SlowCallSplit call;
    call.source = row.source;
    call.probe = row.probe;
    call.detail = row.detail;
    call.pid = static_cast<uint32_t>(row.pid);
    call.tid = static_cast<uint32_t>(row.tid);
    call.start = row.time;
    call.duration_ns = row.duration;
    call.stack_id = row.stack_id;
    if (heap.size() < count) {
      heap.push_back(call);
      std::push_heap(heap.begin(), heap.end(), slower);
    } else if (slower(call, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), slower);
      heap.back() = call;
      std::push_heap(heap.begin(), heap.end(), slower);
    }
  });
  std::sort(heap.begin(), heap.end(), slower);
  return heap;
}

}  // namespace

std::vector<SlowCallSplit> splitSlowCalls(Trace& trace, size_t count) {
  if (count == 0) return {};
  std::vector<SlowCallSplit> calls = slowestCalls(trace, count);
  std::vector<ThreadSpan> spans;
  spans.reserve(calls.size());
  for (const SlowCallSplit& call : calls)
    spans.push_back({.tid = call.tid, .start = call.start, .end = call.start + call.duration_ns});
  const std::vector<ThreadSpanSplit> splits = splitThreadSpans(trace, spans);
  for (size_t i = 0; i < calls.size(); ++i) static_cast<ThreadSpanSplit&>(calls[i]) = splits[i];
  return calls;
}

}  // namespace incise::analyzer
