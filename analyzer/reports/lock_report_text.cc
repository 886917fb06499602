#include "analyzer/reports/lock_report_text.h"

#include <cstdio>

#include "analyzer/model/trace.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"
#include "analyzer/symbolize/symbolizer.h"

namespace incise::analyzer {

std::string lockModeSentence(LockRecordingMode mode) {
  switch (mode) {
    case LockRecordingMode::kAll:
      return "lock mode all: every acquisition was recorded; hold times are exact.";
    case LockRecordingMode::kContended:
      return "lock mode contended: only futex waits were recorded, so acquisitions are the "
             "contended ones and hold times are inferred: a waker held the lock from its last "
             "recorded acquisition (else from the wait's start) until the wake. Holders read "
             "from the lock itself are exact.";
    case LockRecordingMode::kMixed:
      return "lock modes mixed: exact sections where acquisitions were recorded, inferred ones "
             "from futex waits elsewhere.";
    case LockRecordingMode::kNone:
      break;
  }
  return "no lock events in this trace (or none pass the filters): record with --locks.";
}

std::string goHoldsSentence(const GoHoldCounts& holds) {
  if (holds.holds() == 0) return "";
  return "Go mutexes: their holds are those while goroutines waited, from the slow unlocks; a "
         "hold nobody waited for is not seen, and one whose Lock was not seen counts from the "
         "first waiter's arrival or the previous release.";
}

nlohmann::json goHoldsJson(const GoHoldCounts& holds) {
  return {{"holds", holds.holds()},
          {"exact", holds.acquired},
          {"after_previous", holds.after_previous},
          {"episode_start", holds.episode_start}};
}

nlohmann::json distributionJson(const Distribution& d) {
  return {{"count", d.count}, {"total", d.total}, {"p50", d.p50},
          {"p90", d.p90},     {"p99", d.p99},     {"max", d.max}};
}

std::string holderStatesText(const HolderStateCounts& states) {
  std::string text;
  for (size_t state = 1; state < states.size(); ++state) {
    if (states[state] == 0) continue;
    if (!text.empty()) text += ", ";
    text += std::string(format::holderStateName(state)) + " " + formatCount(states[state]);
  }
  return text;
}

nlohmann::json holderStatesJson(const HolderStateCounts& states) {
  nlohmann::json json = nlohmann::json::object();
  for (size_t state = 1; state < states.size(); ++state)
    json[std::string(format::holderStateName(state))] = states[state];
  return json;
}

std::vector<std::string> LockNames::namedText(const std::vector<NamedThread>& threads,
                                              std::pair<const char*, const char*> what) const {
  std::vector<std::string> lines;
  for (const NamedThread& t : threads) {
    std::string line = thread(t.tid, UINT64_MAX) + " " + formatDurationNs(t.ns) + " in " +
                       formatCount(t.waits) + " " + (t.waits == 1 ? what.first : what.second) +
                       " (" + std::string(holdSourceName(t.source())) + ")";
    if (t.stack_id != 0) {
      uint32_t pid = trace_.pidOf(static_cast<uint32_t>(t.tid));
      line += ", from " + terminalText(describeStack(trace_.symbolizer(), trace_.stacks(),
                                                     pid ? pid : t.pid, t.stack_id, UINT64_MAX));
    }
    lines.push_back(line);
  }
  return lines;
}

nlohmann::json LockNames::namedJson(const std::vector<NamedThread>& threads) const {
  nlohmann::json list = nlohmann::json::array();
  for (const NamedThread& t : threads) {
    uint32_t pid = trace_.pidOf(static_cast<uint32_t>(t.tid));
    nlohmann::json entry = threadJson(pid ? pid : t.pid, t.tid, UINT64_MAX);
    entry["waits"] = t.waits;
    entry["ns"] = t.ns;
    entry["exact_waits"] = t.exact_waits;
    entry["source"] = std::string(holdSourceName(t.source()));
    entry["stack"] =
        t.stack_id == 0
            ? nlohmann::json(nullptr)
            : nlohmann::json(describeStack(trace_.symbolizer(), trace_.stacks(), pid ? pid : t.pid,
                                           t.stack_id, UINT64_MAX, 6));
    list.push_back(entry);
  }
  return list;
}

// Text for sentences, so escaped for the terminal like a table cell.
std::string LockNames::lock(const LockId& lock, uint64_t site) const {
  std::string name = hexAddress(lock.address);
  return site == 0 ? name : name + " (" + terminalText(sites_.name(site)) + ")";
}

std::string LockNames::thread(uint64_t tid, uint64_t time) const {
  std::string name = trace_.threadName(static_cast<uint32_t>(tid), time);
  return (name.empty() ? "thread" : terminalText(name)) + " (" + std::to_string(tid) + ")";
}

nlohmann::json LockNames::threadJson(uint64_t pid, uint64_t tid, uint64_t time) const {
  return {
      {"pid", pid}, {"tid", tid}, {"name", trace_.threadName(static_cast<uint32_t>(tid), time)}};
}

}  // namespace incise::analyzer
