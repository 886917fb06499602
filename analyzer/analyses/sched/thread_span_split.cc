#include "analyzer/analyses/sched/thread_span_split.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>

#include "analyzer/analyses/locks/trace_lock_rows.h"
#include "analyzer/analyses/locks/trace_wait_kinds.h"
#include "analyzer/analyses/sched/thread_states.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {
namespace {

uint64_t overlap(uint64_t a_start, uint64_t a_end, uint64_t b_start, uint64_t b_end) {
  uint64_t start = std::max(a_start, b_start), end = std::min(a_end, b_end);
  return end > start ? end - start : 0;
}

struct Charged {
  ThreadSpanSplit split;
  uint64_t blocked_total = 0;
  std::vector<TimeRange> blocked;  // the thread's blocked spans inside the span, in time order
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> lock_wait_by_releaser;  // (tid, address)
};

// The spans of each thread, by index.
using SpansByThread = std::unordered_map<uint64_t, std::vector<size_t>>;

SpansByThread spansByThread(const std::vector<ThreadSpan>& spans) {
  SpansByThread by_tid;
  for (size_t i = 0; i < spans.size(); ++i) by_tid[spans[i].tid].push_back(i);
  // A thread's spans do not overlap: in start order they are in end order too.
  for (auto& [tid, indices] : by_tid) {
    std::sort(indices.begin(), indices.end(),
              [&](size_t a, size_t b) { return spans[a].start < spans[b].start; });
  }
  return by_tid;
}

using StatePieceVisit =
    std::function<void(size_t index, ThreadState state, uint64_t start, uint64_t end)>;

// `visit` for every piece of a span's thread's states inside the span, in
// the order of the schedule replay.
void forEachStatePiece(Trace& trace, const std::vector<ThreadSpan>& spans,
                       const SpansByThread& by_tid, const StatePieceVisit& visit) {
  ThreadStateMachine machine(RecordedThreads::of(trace));
  machine.observeFrom(std::max(trace.window().start, trace.startTime()));
  machine.on_state = [&](const StateSpan& state) {
    auto found = by_tid.find(state.tid);
    if (found == by_tid.end()) return;
    const std::vector<size_t>& indices = found->second;
    auto first = std::upper_bound(indices.begin(), indices.end(), state.start,
                                  [&](uint64_t time, size_t i) { return time < spans[i].end; });
    for (auto it = first; it != indices.end() && spans[*it].start < state.end; ++it) {
      const uint64_t start = std::max(state.start, spans[*it].start);
      const uint64_t end = std::min(state.end, spans[*it].end);
      if (end > start) visit(*it, state.state, start, end);
    }
  };
  replaySchedule(trace, Replay::kSwitchesAndWakeups, machine);
  machine.finish(trace.endTime());
}

void chargeStates(Trace& trace, const std::vector<ThreadSpan>& spans, std::vector<Charged>& charged,
                  const SpansByThread& by_tid) {
  forEachStatePiece(trace, spans, by_tid,
                    [&](size_t index, ThreadState state, uint64_t start, uint64_t end) {
                      Charged& into = charged[index];
                      switch (state) {
                        case ThreadState::kRunning:
                          into.split.on_cpu_ns += end - start;
                          break;
                        case ThreadState::kRunnable:
                          into.split.runnable_ns += end - start;
                          break;
                        case ThreadState::kBlocked:
                          into.blocked_total += end - start;
                          into.blocked.push_back({start, end});
                          break;
                      }
                    });

  trace.forEachRow<format::BlockSummary>([&](const format::BlockSummary& row) {
    auto found = by_tid.find(row.tid);
    if (found == by_tid.end()) return;
    for (size_t index : found->second) {
      if (row.time < spans[index].end && row.end_time > spans[index].start)
        charged[index].split.short_blocks_summarized = true;
    }
  });
}

// A lock wait counts where the thread was blocked: a goroutine's wait, or a
// spin, leaves its thread running something.
void chargeLockWaits(Trace& trace, const std::vector<ThreadSpan>& spans,
                     std::vector<Charged>& charged, const SpansByThread& by_tid) {
  WaitClassifier classifier(trace);
  streamLockRows(trace,
                 {.wait =
                      [&](const LockWait& wait) {
                        auto found = by_tid.find(wait.tid);
                        if (found == by_tid.end()) return;
                        for (size_t index : found->second) {
                          Charged& into = charged[index];
                          uint64_t start = std::max(wait.start, spans[index].start);
                          uint64_t end = std::min(wait.end, spans[index].end);
                          if (end <= start) continue;
                          uint64_t ns = 0;
                          for (const TimeRange& blocked : into.blocked) {
                            ns += overlap(blocked.start, blocked.end, start, end);
                          }
                          if (ns == 0) continue;
                          into.split.lock_wait_ns += ns;
                          into.lock_wait_by_releaser[{wait.releaser_tid, wait.lock.address}] += ns;
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

std::vector<std::vector<TimeRange>> onCpuPieces(Trace& trace,
                                                const std::vector<ThreadSpan>& spans) {
  std::vector<std::vector<TimeRange>> pieces(spans.size());
  if (spans.empty()) return pieces;
  forEachStatePiece(trace, spans, spansByThread(spans),
                    [&](size_t index, ThreadState state, uint64_t start, uint64_t end) {
                      if (state == ThreadState::kRunning) pieces[index].push_back({start, end});
                    });
  return pieces;
}

void addSpanTimes(ThreadSpanSplit& into, const ThreadSpanSplit& split) {
  into.on_cpu_ns += split.on_cpu_ns;
  into.runnable_ns += split.runnable_ns;
  into.lock_wait_ns += split.lock_wait_ns;
  into.blocked_ns += split.blocked_ns;
  into.unobserved_ns += split.unobserved_ns;
  into.short_blocks_summarized |= split.short_blocks_summarized;
}

std::vector<ThreadSpanSplit> splitThreadSpans(Trace& trace, const std::vector<ThreadSpan>& spans) {
  if (spans.empty()) return {};
  std::vector<Charged> charged(spans.size());
  const SpansByThread by_tid = spansByThread(spans);
  chargeStates(trace, spans, charged, by_tid);
  chargeLockWaits(trace, spans, charged, by_tid);

  std::vector<ThreadSpanSplit> result;
  result.reserve(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    Charged& into = charged[i];
    ThreadSpanSplit& split = into.split;
    // Lock waits of one thread never overlap, nor do its blocked spans.
    split.lock_wait_ns = std::min(split.lock_wait_ns, into.blocked_total);
    split.blocked_ns = into.blocked_total - split.lock_wait_ns;
    const uint64_t length = spans[i].end > spans[i].start ? spans[i].end - spans[i].start : 0;
    const uint64_t seen = split.on_cpu_ns + split.runnable_ns + into.blocked_total;
    split.unobserved_ns = length > seen ? length - seen : 0;
    uint64_t longest = 0;
    for (const auto& [releaser, ns] : into.lock_wait_by_releaser) {
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
