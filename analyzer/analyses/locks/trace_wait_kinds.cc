#include "analyzer/analyses/locks/trace_wait_kinds.h"

#include <string>
#include <vector>

#include "analyzer/analyses/locks/lock_sites.h"
#include "analyzer/model/trace.h"
#include "analyzer/symbolize/symbolizer.h"

namespace incise::analyzer {
namespace {

// Enough to reach a runtime's parking function above a few frames of C
// library and runtime code; deeper frames are the program's own.
constexpr size_t kFramesExamined = 24;

}  // namespace

WaitClassifier::WaitClassifier(Trace& trace) : trace_(trace) {}

const WaitFrames& WaitClassifier::framesOf(uint64_t pid, uint64_t stack_id, uint64_t time) {
  uint64_t key = (pid << 40) ^ stack_id;
  auto [it, fresh] = frames_.try_emplace(key);
  if (!fresh || stack_id == 0) return it->second;
  std::span<const uint64_t> addresses = trace_.stacks().frames(stack_id);
  std::vector<Frame> named;
  for (size_t i = 0; i < addresses.size() && named.size() < kFramesExamined; ++i) {
    if (format::isKernelAddress(addresses[i])) continue;
    // Return addresses point after the call: look up the call itself (the
    // leaf user frame is the syscall's own address).
    uint64_t address = named.empty() || addresses[i] == 0 ? addresses[i] : addresses[i] - 1;
    named.push_back(trace_.symbolizer().lookup(static_cast<uint32_t>(pid), address, time));
  }
  std::vector<NamedFrame> frames;
  frames.reserve(named.size());
  for (const Frame& f : named) {
    frames.push_back({.name = f.function.empty() ? std::string_view() : std::string_view(f.name),
                      .in_c_library = isRuntimeLibrary(f.module)});
  }
  it->second = waitFramesOf(frames);
  return it->second;
}

WaitClass WaitClassifier::classify(const format::LockInterval& row) {
  format::LockInterval checked = row;
  // A holder not checked while recording: keep it only if the trace knows
  // it as a thread of the same process.
  if (checked.holder_tid != 0 && (checked.flags & format::kLockHolderChecked) == 0) {
    uint32_t pid = trace_.pidOf(static_cast<uint32_t>(checked.holder_tid));
    if (pid != checked.pid) {
      checked.holder_tid = 0;
      // A join's value that is no thread of the process: no join after all.
      if (checked.object == static_cast<uint64_t>(format::WaitObject::kThread))
        checked.object = static_cast<uint64_t>(format::WaitObject::kUnknown);
    }
  }
  bool probed = row.lock_kind != static_cast<uint64_t>(format::LockKind::kFutex);
  const WaitFrames& frames =
      probed ? WaitFrames{} : framesOf(row.pid, row.stack_id, row.acquired_time);
  return classifyWait(checked, frames);
}

format::LockInterval WaitClassifier::normalized(const format::LockInterval& row,
                                                const WaitClass& wait) const {
  format::LockInterval lock = row;
  lock.address = wait.object;
  lock.holder_tid =
      wait.holder_source == HoldSource::kExact && isLockKind(wait.kind) ? wait.holder_tid : 0;
  return lock;
}

}  // namespace incise::analyzer
