// UnwoundStacks: see unwound_stacks.h.
#include "analyzer/model/unwound_stacks.h"

namespace incise::analyzer {

bool UnwoundStacks::wanted(const format::Header& header) {
  return header.options.stack_mode == "dwarf" || header.options.stack_mode == "hybrid";
}

UnwoundStacks::UnwoundStacks(const format::Reader& reader)
    : reader_(reader),
      hybrid_(reader.header().options.stack_mode == "hybrid"),
      unwinder_(reader.metadata()) {
  // The file's stacks keep their ids; unwound ones are added after them.
  const format::StackTable& file = reader.stacks();
  for (uint64_t id = 1; id <= file.maxId(); ++id) stacks_.append(id, file.frames(id));
  next_id_ = file.maxId() + 1;
}

size_t UnwoundStacks::FramesHash::operator()(const std::vector<uint64_t>& frames) const {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t f : frames) h = (h ^ f) * 1099511628211ull;
  return static_cast<size_t>(h);
}

uint64_t UnwoundStacks::stackFor(const format::CpuSample& row,
                                 std::span<const uint8_t> user_stack) {
  if (row.user_ip == 0 || row.user_sp == 0) return row.stack_id;
  std::span<const uint64_t> frames = reader_.stacks().frames(row.stack_id);
  size_t kernel = 0;
  while (kernel < frames.size() && format::isKernelAddress(frames[kernel])) ++kernel;
  UnwindRegisters regs{.ip = row.user_ip, .sp = row.user_sp, .bp = row.user_bp};
  StackMemory memory{.sp = row.user_sp, .bytes = user_stack};
  auto pid = static_cast<uint32_t>(row.pid);
  UnwindResult result = hybrid_
                            ? unwinder_.repair(pid, row.time, regs, memory, frames.subspan(kernel))
                            : unwinder_.unwind(pid, row.time, regs, memory);
  scratch_.assign(frames.begin(), frames.begin() + static_cast<ptrdiff_t>(kernel));
  scratch_.insert(scratch_.end(), result.frames.begin(), result.frames.end());
  auto [it, inserted] = new_ids_.try_emplace(scratch_, next_id_);
  if (inserted) {
    stacks_.append(next_id_, scratch_);
    ++next_id_;
  }
  return it->second;
}

}  // namespace incise::analyzer
