// UnwoundStacks: the stack table reports see for a -g dwarf / hybrid trace.
//
// Samples that carry user registers and a stack copy are unwound offline
// (analyzer/unwind/) as they stream past; the unwound user frames replace
// the frame-pointer user frames of that sample (the kernel frames stay), and
// the result is interned into a table that holds every stack of the file
// under its own id plus the new stacks after them. Reports keep reading
// `stack_id` and `Trace::stacks()` and never know which mode recorded.
//
// Unwinding is the expensive half and needs no order: unwindChunk() runs on
// the chunk decoder's threads, one Unwinder (and so one CFI rule cache) per
// worker, and leaves the frames in an UnwoundChunk; stackFor() then interns
// them on the consuming thread, in file order, so stack ids do not depend on
// the thread count.
//
//   UnwoundStacks unwound(reader, decoder.threads());  // only for dwarf/hybrid traces
//   // on decoding thread `worker`:
//   std::unique_ptr<UnwoundChunk> frames = unwound.unwindChunk(chunk, worker, wanted);
//   // in order, on the consuming thread:
//   row.stack_id = unwound.stackFor(row, *frames, i);
//   unwound.stacks().frames(row.stack_id);
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/model/chunk_decoder.h"
#include "analyzer/unwind/unwinder.h"
#include "format/event_kinds.h"
#include "format/reader.h"

namespace incise::analyzer {

// The unwound user frames of one chunk's samples, row by row.
struct UnwoundChunk : ChunkDecoder::Prepared {
  std::vector<uint64_t> frames;  // every unwound row's frames, leaf first, back to back
  std::vector<uint32_t> ends;    // per row: end of its frames (its start is the previous end)
  std::vector<uint8_t> unwound;  // per row: 1 when the frames replace the file's user stack

  std::span<const uint64_t> framesOf(size_t row) const;
};

class UnwoundStacks {
 public:
  // `workers`: how many threads may call unwindChunk at once (worker < workers).
  UnwoundStacks(const format::Reader& reader, unsigned workers);
  ~UnwoundStacks();

  // True for traces recorded with -g dwarf or -g hybrid.
  static bool wanted(const format::Header& header);

  // Unwinds the samples of a cpu_sample chunk that have registers and pass
  // `keep` (null: all); thread-safe across distinct `worker`s. The stack
  // copies are released afterwards (nothing else reads them): their buffer
  // goes back to the pool while the chunk waits for its consumer.
  std::unique_ptr<UnwoundChunk> unwindChunk(
      format::Chunk& chunk, unsigned worker,
      const std::function<bool(const format::CpuSample&)>& keep) const;

  // The id (in stacks()) of `row`'s stack with its user part replaced by the
  // chunk's unwound frames; the row's own id when it was not unwound.
  uint64_t stackFor(const format::CpuSample& row, const UnwoundChunk& chunk, size_t i);

  const format::StackTable& stacks() const { return stacks_; }
  // Summed over the workers.
  UnwindCounters counters() const;

 private:
  struct FramesHash {
    size_t operator()(const std::vector<uint64_t>& frames) const;
  };

  const format::Reader& reader_;
  bool hybrid_ = false;
  std::vector<std::unique_ptr<Unwinder>> unwinders_;  // one per worker
  format::StackTable stacks_;
  uint64_t next_id_ = 1;
  std::unordered_map<std::vector<uint64_t>, uint64_t, FramesHash> new_ids_;
  std::vector<uint64_t> scratch_;
};

}  // namespace incise::analyzer
