// UnwoundStacks: see unwound_stacks.h.
#include "analyzer/model/unwound_stacks.h"

#include <algorithm>

namespace incise::analyzer {
namespace {

// The user part of a file stack: what follows its kernel frames.
size_t kernelFrames(std::span<const uint64_t> frames) {
  size_t kernel = 0;
  while (kernel < frames.size() && format::isKernelAddress(frames[kernel])) ++kernel;
  return kernel;
}

}  // namespace

std::span<const uint64_t> UnwoundChunk::framesOf(size_t row) const {
  if (row >= ends.size()) return {};
  uint32_t begin = row == 0 ? 0 : ends[row - 1];
  return std::span<const uint64_t>(frames).subspan(begin, ends[row] - begin);
}

bool UnwoundStacks::wanted(const format::Header& header) {
  return header.options.stack_mode == "dwarf" || header.options.stack_mode == "hybrid";
}

UnwoundStacks::UnwoundStacks(const format::Reader& reader, unsigned workers)
    : reader_(reader), hybrid_(reader.header().options.stack_mode == "hybrid") {
  for (unsigned i = 0; i < std::max(1u, workers); ++i)
    unwinders_.push_back(std::make_unique<Unwinder>(reader.metadata()));
  // The file's stacks keep their ids; unwound ones are added after them.
  const format::StackTable& file = reader.stacks();
  for (uint64_t id = 1; id <= file.maxId(); ++id) stacks_.append(id, file.frames(id));
  next_id_ = file.maxId() + 1;
}

UnwoundStacks::~UnwoundStacks() = default;

UnwindCounters UnwoundStacks::counters() const {
  UnwindCounters sum;
  for (const auto& unwinder : unwinders_) sum += unwinder->counters();
  return sum;
}

size_t UnwoundStacks::FramesHash::operator()(const std::vector<uint64_t>& frames) const {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t f : frames) h = (h ^ f) * 1099511628211ull;
  return static_cast<size_t>(h);
}

std::unique_ptr<UnwoundChunk> UnwoundStacks::unwindChunk(
    format::Chunk& chunk, unsigned worker,
    const std::function<bool(const format::CpuSample&)>& keep) const {
  auto out = std::make_unique<UnwoundChunk>();
  if (chunk.kind() != format::EventKind::kCpuSample) return out;
  Unwinder& unwinder = *unwinders_[worker % unwinders_.size()];
  out->ends.reserve(chunk.rows());
  out->unwound.reserve(chunk.rows());
  out->frames.reserve(chunk.rows() * 8);
  for (size_t i = 0; i < chunk.rows(); ++i) {
    auto row = chunk.row<format::CpuSample>(i);
    bool unwind = row.user_ip != 0 && row.user_sp != 0 && (!keep || keep(row));
    if (unwind) {
      std::span<const uint64_t> file_frames = reader_.stacks().frames(row.stack_id);
      std::span<const uint64_t> fp_user =
          hybrid_ ? file_frames.subspan(kernelFrames(file_frames)) : std::span<const uint64_t>();
      UnwindRegisters regs{.ip = row.user_ip, .sp = row.user_sp, .bp = row.user_bp};
      StackMemory memory{.sp = row.user_sp,
                         .bytes = chunk.bytes(format::CpuSampleColumn::user_stack, i)};
      unwinder.walk(static_cast<uint32_t>(row.pid), row.time, regs, memory, fp_user, out->frames);
    }
    out->ends.push_back(static_cast<uint32_t>(out->frames.size()));
    out->unwound.push_back(unwind ? 1 : 0);
  }
  chunk.releaseBlobs(static_cast<unsigned>(format::CpuSampleColumn::user_stack));
  return out;
}

uint64_t UnwoundStacks::stackFor(const format::CpuSample& row, const UnwoundChunk& chunk,
                                 size_t i) {
  if (i >= chunk.unwound.size() || !chunk.unwound[i]) return row.stack_id;
  std::span<const uint64_t> file_frames = reader_.stacks().frames(row.stack_id);
  std::span<const uint64_t> user = chunk.framesOf(i);
  scratch_.assign(file_frames.begin(), file_frames.begin() + kernelFrames(file_frames));
  scratch_.insert(scratch_.end(), user.begin(), user.end());
  auto it = new_ids_.find(scratch_);
  if (it != new_ids_.end()) return it->second;
  stacks_.append(next_id_, scratch_);
  new_ids_.emplace(scratch_, next_id_);
  return next_id_++;
}

}  // namespace incise::analyzer
