#include "recorder/event_sink.h"

#include <time.h>

#include <algorithm>

namespace incise::recorder {

uint64_t monotonicNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t EventSink::internStack(uint32_t pid, const event_stack& stack) {
  size_t kernel = std::min<size_t>(stack.kernel_count, MAX_STACK_DEPTH);
  size_t user = std::min<size_t>(stack.user_count, MAX_STACK_DEPTH);
  // __u64 is unsigned long long, uint64_t unsigned long: same bytes, distinct types.
  const auto* frames = reinterpret_cast<const uint64_t*>(stack.frames);
  return internStack(pid, std::span<const uint64_t>(frames, kernel + user), kernel);
}

uint64_t EventSink::internStack(uint32_t pid, std::span<const uint64_t> frames,
                                size_t kernel_count) {
  kernel_count = std::min(kernel_count, frames.size());
  if (const size_t own = own_frames_.leading(frames.first(kernel_count))) {
    frames = frames.subspan(own);
    kernel_count -= own;
  }
  if (frames.empty()) return 0;
  format::InternedStack stack = writer_.intern(frames);
  // Only a stack seen for the first time needs its frames mapped to objects.
  if (stack.is_new) {
    processes_.symbols().noteKernelFrames(frames.first(kernel_count));
    processes_.noteUserFrames(pid, frames.subspan(kernel_count), monotonicNowNs());
  }
  return stack.id;
}

void EventSink::noteLost(format::LostSource source, uint64_t count) {
  if (count == 0) return;
  lost_ += count;
  append(format::Lost{
      .time = monotonicNowNs(), .source = static_cast<uint64_t>(source), .count = count});
}

void EventSink::addNote(const std::string& note) {
  format::MetadataDelta delta;
  delta.time = monotonicNowNs();
  delta.notes.push_back(note);
  writer_.addMetadata(std::move(delta));
}

}  // namespace incise::recorder
