#include "analyzer/analyses/locks/trace_wait_kinds.h"

#include <string>
#include <vector>

#include "analyzer/analyses/locks/lock_sites.h"
#include "analyzer/model/trace.h"
#include "analyzer/symbolize/stack_frames.h"
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
  // The same frames every report shows (return addresses looked up at their
  // call, garbage cut); the kernel's are not the program's way of waiting.
  std::vector<StackFrame> named;
  stackFrames(trace_.symbolizer(), static_cast<uint32_t>(pid), trace_.stacks().frames(stack_id),
              time, named);
  std::vector<NamedFrame> frames;
  for (const StackFrame& named_frame : named) {
    if (format::isKernelAddress(named_frame.address)) continue;
    if (frames.size() == kFramesExamined) break;
    const Frame& f = *named_frame.frame;
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
