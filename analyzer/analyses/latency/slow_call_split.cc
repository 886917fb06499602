#include "analyzer/analyses/latency/slow_call_split.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "analyzer/analyses/locks/trace_lock_rows.h"
#include "analyzer/analyses/locks/trace_wait_kinds.h"
#include "analyzer/analyses/sched/thread_states.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {
namespace {

struct Interval {
  uint64_t start = 0, end = 0;
};

uint64_t overlap(uint64_t a_start, uint64_t a_end, uint64_t b_start, uint64_t b_end) {
  uint64_t start = std::max(a_start, b_start), end = std::min(a_end, b_end);
  return end > start ? end - start : 0;
}

struct Call {
  SlowCallSplit split;
  uint64_t end = 0;
  uint64_t blocked_total = 0;
  std::vector<Interval> blocked;  // the thread's blocked spans inside the call, in time order
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> lock_wait_by_releaser;  // (tid, address)
};

// Slower first; among equal durations the earlier.
bool slower(const SlowCallSplit& a, const SlowCallSplit& b) {
  if (a.duration_ns != b.duration_ns) return a.duration_ns > b.duration_ns;
  return a.start < b.start;
}

std::vector<Call> slowestCalls(Trace& trace, size_t count) {
  std::vector<SlowCallSplit> heap;  // the kept calls; ordered by `slower`, front: the least slow
  trace.forEachRow<format::Latency>([&](const format::Latency& row) {
    SlowCallSplit call{.source = row.source,
                       .probe = row.probe,
                       .detail = row.detail,
                       .pid = static_cast<uint32_t>(row.pid),
                       .tid = static_cast<uint32_t>(row.tid),
                       .start = row.time,
                       .duration_ns = row.duration,
                       .stack_id = row.stack_id};
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
  std::vector<Call> calls;
  calls.reserve(heap.size());
  for (const SlowCallSplit& split : heap) {
    calls.push_back({.split = split, .end = split.start + split.duration_ns});
  }
  return calls;
}

// The calls of each thread, by index.
using CallsByThread = std::unordered_map<uint64_t, std::vector<size_t>>;

void chargeStates(Trace& trace, std::vector<Call>& calls, const CallsByThread& by_tid) {
  ThreadStateMachine machine(RecordedThreads::of(trace));
  machine.observeFrom(std::max(trace.window().start, trace.startTime()));
  machine.on_state = [&](const StateSpan& span) {
    auto found = by_tid.find(span.tid);
    if (found == by_tid.end()) return;
    for (size_t index : found->second) {
      Call& call = calls[index];
      uint64_t ns = overlap(span.start, span.end, call.split.start, call.end);
      if (ns == 0) continue;
      switch (span.state) {
        case ThreadState::kRunning:
          call.split.on_cpu_ns += ns;
          break;
        case ThreadState::kRunnable:
          call.split.runnable_ns += ns;
          break;
        case ThreadState::kBlocked:
          call.blocked_total += ns;
          call.blocked.push_back(
              {std::max(span.start, call.split.start), std::min(span.end, call.end)});
          break;
      }
    }
  };
  replaySchedule(trace, Replay::kSwitchesAndWakeups, machine);
  machine.finish(trace.endTime());

  trace.forEachRow<format::BlockSummary>([&](const format::BlockSummary& row) {
    auto found = by_tid.find(row.tid);
    if (found == by_tid.end()) return;
    for (size_t index : found->second) {
      Call& call = calls[index];
      if (row.time < call.end && row.end_time > call.split.start) {
        call.split.short_blocks_summarized = true;
      }
    }
  });
}

// A lock wait counts where the thread was blocked: a goroutine's wait, or a
// spin, leaves its thread running something.
void chargeLockWaits(Trace& trace, std::vector<Call>& calls, const CallsByThread& by_tid) {
  WaitClassifier classifier(trace);
  streamLockRows(trace,
                 {.wait =
                      [&](const LockWait& wait) {
                        auto found = by_tid.find(wait.tid);
                        if (found == by_tid.end()) return;
                        for (size_t index : found->second) {
                          Call& call = calls[index];
                          uint64_t start = std::max(wait.start, call.split.start);
                          uint64_t end = std::min(wait.end, call.end);
                          if (end <= start) continue;
                          uint64_t ns = 0;
                          for (const Interval& blocked : call.blocked) {
                            ns += overlap(blocked.start, blocked.end, start, end);
                          }
                          if (ns == 0) continue;
                          call.split.lock_wait_ns += ns;
                          call.lock_wait_by_releaser[{wait.releaser_tid, wait.lock.address}] += ns;
                        }
                      }},
                 [&](format::LockInterval& row) {
                   WaitClass wait = classifier.classify(row);
                   if (!isLockKind(wait.kind)) return false;
                   row = classifier.normalized(row, wait);
                   return true;
                 });
}

}  // namespace

std::vector<SlowCallSplit> splitSlowCalls(Trace& trace, size_t count) {
  if (count == 0) return {};
  std::vector<Call> calls = slowestCalls(trace, count);
  if (calls.empty()) return {};
  CallsByThread by_tid;
  for (size_t i = 0; i < calls.size(); ++i) by_tid[calls[i].split.tid].push_back(i);
  chargeStates(trace, calls, by_tid);
  chargeLockWaits(trace, calls, by_tid);

  std::vector<SlowCallSplit> result;
  result.reserve(calls.size());
  for (Call& call : calls) {
    SlowCallSplit& split = call.split;
    // Lock waits of one thread never overlap, nor do its blocked spans.
    split.lock_wait_ns = std::min(split.lock_wait_ns, call.blocked_total);
    split.blocked_ns = call.blocked_total - split.lock_wait_ns;
    uint64_t seen = split.on_cpu_ns + split.runnable_ns + call.blocked_total;
    split.unobserved_ns = split.duration_ns > seen ? split.duration_ns - seen : 0;
    uint64_t longest = 0;
    for (const auto& [releaser, ns] : call.lock_wait_by_releaser) {
      if (ns > longest) {
        longest = ns;
        split.lock_releaser_tid = releaser.first;
        split.lock_address = releaser.second;
      }
    }
    result.push_back(split);
  }
  return result;
}

}  // namespace incise::analyzer
