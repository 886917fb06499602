// EventSink: where decoded BPF records go. Wraps the format::Writer (rows,
// interned stacks, metadata) and the ProcessTracker (which learns comm, maps
// and the objects that stacks hit, for the metadata written at the end).
//
// Used only from the main poll loop's thread; the writer compresses and
// writes on its own background thread.
//
//   uint64_t stack = sink.internStack(e->header.pid, e->stack);
//   sink.append(format::CpuSample{.time = e->header.time, ..., .stack_id = stack});
//   sink.noteLost(format::LostSource::kCpuSamples, 12);
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "bpf/events.h"
#include "format/writer.h"
#include "recorder/metadata/own_frames.h"
#include "recorder/metadata/process_tracker.h"

namespace incise::recorder {

class EventSink {
 public:
  EventSink(format::Writer& writer, ProcessTracker& processes)
      : writer_(writer), processes_(processes) {}

  template <typename Row>
  void append(const Row& row) {
    writer_.append(row);
    ++rows_;
  }
  // A lock row goes to the wait claim first (when one is set).
  void append(const format::LockInterval& row) {
    if (wait_claim_ && wait_claim_(row)) return;
    writer_.append(row);
    ++rows_;
  }
  // Lets a source take lock rows of other sources before they are written:
  // the preload path joins the scheduler's futex waits to the lock calls
  // they happened in (recorder/sources/preload_lock_source.h). `claim`
  // returns true for a row it took; it writes the rows it makes itself.
  void setWaitClaim(std::function<bool(const format::LockInterval&)> claim) {
    wait_claim_ = std::move(claim);
  }
  // A cpu sample with its user stack copy (-g dwarf / hybrid).
  void append(const format::CpuSample& row, std::span<const uint8_t> user_stack) {
    writer_.append(row, user_stack);
    ++rows_;
  }

  // Interns a BPF-captured stack (kernel frames, then user frames) of a
  // thread of `pid`; 0 for an empty stack. The recorder's own frames at its
  // kernel leaf (setOwnFrames) are cut first. New stacks tell the process
  // tracker which kernel symbols and mapped objects were hit.
  uint64_t internStack(uint32_t pid, const event_stack& stack);
  uint64_t internStack(uint32_t pid, std::span<const uint64_t> frames, size_t kernel_count);

  // `count` events of `source` the kernel (or the recorder) dropped, now.
  void noteLost(format::LostSource source, uint64_t count);
  // A remark stored in the trace's metadata notes (and printed with -v).
  void addNote(const std::string& note);

  // The recorder's BPF programs and tracing glue, cut from every stack.
  void setOwnFrames(OwnFrames own) { own_frames_ = std::move(own); }

  ProcessTracker& processes() { return processes_; }
  format::Writer& writer() { return writer_; }
  uint64_t rowsAppended() const { return rows_; }
  uint64_t lostTotal() const { return lost_; }

 private:
  format::Writer& writer_;
  ProcessTracker& processes_;
  uint64_t rows_ = 0;
  uint64_t lost_ = 0;
  OwnFrames own_frames_;
  std::function<bool(const format::LockInterval&)> wait_claim_;
};

// CLOCK_MONOTONIC in ns, the clock of bpf_ktime_get_ns().
uint64_t monotonicNowNs();

}  // namespace incise::recorder
