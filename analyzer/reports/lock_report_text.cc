#include "analyzer/reports/lock_report_text.h"

#include <cstdio>

#include "analyzer/model/trace.h"
#include "analyzer/render/terminal_text.h"

namespace incise::analyzer {

std::string hexAddress(uint64_t address) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(address));
  return buffer;
}

std::string lockModeSentence(LockRecordingMode mode) {
  switch (mode) {
    case LockRecordingMode::kAll:
      return "lock mode all: every acquisition was recorded; hold times are exact.";
    case LockRecordingMode::kContended:
      return "lock mode contended: only futex waits were recorded, so acquisitions are the "
             "contended ones and hold times are inferred: a waker held the lock from its last "
             "recorded acquisition (else from the wait's start) until the wake.";
    case LockRecordingMode::kMixed:
      return "lock modes mixed: exact sections where acquisitions were recorded, inferred ones "
             "from futex waits elsewhere.";
    case LockRecordingMode::kNone:
      break;
  }
  return "no lock events in this trace (or none pass the filters): record with --locks.";
}

nlohmann::json distributionJson(const Distribution& d) {
  return {{"count", d.count}, {"total", d.total}, {"p50", d.p50},
          {"p90", d.p90},     {"p99", d.p99},     {"max", d.max}};
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
