#include "analyzer/analyses/sched/recorded_threads.h"

#include <charconv>

#include "analyzer/model/trace.h"

namespace incise::analyzer {
namespace {

bool startsWith(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// "pid 12,13" (the header's target for -p): the listed pids.
void addListedPids(const std::string& target, std::unordered_set<uint32_t>& pids) {
  const char* at = target.data() + 4;
  const char* end = target.data() + target.size();
  while (at < end) {
    uint32_t pid = 0;
    auto [next, ec] = std::from_chars(at, end, pid);
    if (ec != std::errc()) break;
    pids.insert(pid);
    at = next + (next < end && *next == ',');
  }
}

}  // namespace

RecordedThreads RecordedThreads::only(std::unordered_set<uint32_t> pids) {
  RecordedThreads recorded;
  recorded.all_ = false;
  recorded.pids_ = std::move(pids);
  return recorded;
}

RecordedThreads RecordedThreads::of(Trace& trace) {
  const std::string& target = trace.header().options.target;
  if (target.empty() || target == "all") return {};
  std::unordered_set<uint32_t> pids;
  if (startsWith(target, "pid ")) addListedPids(target, pids);
  const format::Metadata& metadata = trace.reader().metadata();
  for (const auto& process : metadata.processes) pids.insert(process.pid);
  for (const auto& thread : metadata.threads) pids.insert(thread.pid);
  // Process events are few; read them all, whatever the report's filter.
  for (const auto& ref : trace.reader().chunks(format::EventKind::kProcessEvent)) {
    auto chunk = trace.reader().readChunk(ref, format::ColumnSet::all());
    if (!chunk) continue;  // counted as damage by Trace::open already
    for (size_t i = 0; i < chunk->rows(); ++i) {
      auto row = chunk->row<format::ProcessEvent>(i);
      pids.insert(static_cast<uint32_t>(row.pid));
      if (row.event == static_cast<uint64_t>(format::ProcessEventType::kFork))
        pids.insert(static_cast<uint32_t>(row.peer_pid));
    }
  }
  pids.erase(0);  // idle is never a target
  return only(std::move(pids));
}

}  // namespace incise::analyzer
