// Offline user-stack unwinding: see unwinder.h.
#include "analyzer/unwind/unwinder.h"

#include <algorithm>

#include "analyzer/unwind/dwarf_expression.h"
#include "analyzer/unwind/unwind_marker.h"

namespace incise::analyzer {
namespace {

constexpr uint32_t kAnonymous = UINT32_MAX;

std::string objectKey(const std::string& build_id, const std::string& path) {
  return build_id.empty() ? "path:" + path : "id:" + build_id;
}

bool fileBacked(const std::string& path) {
  return !path.empty() && path[0] == '/';
}

bool cfaOf(const CfiRule& rule, const ExpressionContext& context, uint64_t& cfa) {
  if (rule.simple_cfa.regno >= 0) {
    uint64_t base = 0;
    if (!context.regs.get(rule.simple_cfa.regno, base)) return false;
    cfa = base + rule.simple_cfa.offset;
    return true;
  }
  Result<ExpressionValue> value = evaluateExpression(rule.cfa, context);
  if (!value) return false;
  cfa = value->value;
  return true;
}

// Where a register rule puts the caller's value: an address to read it
// from, or the value itself.
struct Located {
  bool ok = false;
  uint64_t value = 0;
  bool is_address = true;
};

Located locate(const RegisterRule& rule, const SimpleLocation& simple,
               const ExpressionContext& context) {
  switch (simple.kind) {
    case SimpleLocation::kSavedAtCfaPlus:
      return Located{.ok = true, .value = context.cfa + simple.offset, .is_address = true};
    case SimpleLocation::kIsCfaPlus:
      return Located{.ok = true, .value = context.cfa + simple.offset, .is_address = false};
    case SimpleLocation::kGeneral:
      break;
  }
  Result<ExpressionValue> value = evaluateExpression(rule.ops, context);
  if (!value) return Located{};
  return Located{.ok = true, .value = value->value, .is_address = value->is_address};
}

}  // namespace

std::string_view unwindEndName(UnwindEnd end) {
  switch (end) {
    case UnwindEnd::kOutermost:
      return "outermost frame";
    case UnwindEnd::kStackExhausted:
      return "stack copy exhausted";
    case UnwindEnd::kNoRule:
      return "no CFI or frame pointer";
    case UnwindEnd::kBadFrame:
      return "bad frame";
    case UnwindEnd::kDepthLimit:
      return "depth limit";
    case UnwindEnd::kSpliced:
      return "joined the frame-pointer stack";
  }
  return "unknown";
}

Unwinder::Unwinder(const format::Metadata& metadata) : pc_cache_(size_t{1} << kPcCacheBits) {
  for (const auto& object : metadata.objects) {
    std::string key = objectKey(object.build_id, object.path);
    auto [it, inserted] = object_by_key_.try_emplace(key, static_cast<uint32_t>(objects_.size()));
    if (inserted) {
      objects_.push_back(Object{.symbols = &object});
    } else if (objects_[it->second].symbols->eh_frame.empty() && !object.eh_frame.empty()) {
      objects_[it->second].symbols = &object;  // a later copy with CFI wins
    }
    if (!object.build_id.empty())
      object_by_key_.try_emplace(objectKey("", object.path), it->second);
  }
  for (const auto& mapping : metadata.mappings) {
    MappingRef ref{.start = mapping.start, .file_offset = mapping.file_offset};
    if (fileBacked(mapping.path)) {
      auto it = object_by_key_.find(objectKey(mapping.build_id, mapping.path));
      if (it == object_by_key_.end()) it = object_by_key_.find(objectKey("", mapping.path));
      if (it != object_by_key_.end()) ref.object = it->second;
    }
    mappings_[mapping.pid].add(mapping.start, mapping.end, mapping.time, ref);
  }
  for (auto& [pid, intervals] : mappings_) intervals.finish();
  for (const auto& snapshot : metadata.perf_maps) {
    auto& intervals = jit_[snapshot.pid];
    for (const auto& entry : snapshot.entries)
      intervals.add(entry.start, entry.start + entry.size, snapshot.time, true);
  }
  for (auto& [pid, intervals] : jit_) intervals.finish();
}

Unwinder::~Unwinder() = default;

Unwinder::PcInfo& Unwinder::pcInfo(uint32_t pid, uint64_t pc, uint64_t time) {
  uint64_t hash = (pc ^ (uint64_t{pid} << 40)) * 0x9E3779B97F4A7C15ull;
  PcInfo& slot = pc_cache_[hash >> (64 - kPcCacheBits)];
  if (slot.filled && slot.pc == pc && slot.pid == pid && time >= slot.valid_from &&
      time < slot.valid_until)
    return slot;
  slot = PcInfo{.filled = true, .pid = pid, .pc = pc};
  auto it = mappings_.find(pid);
  if (it == mappings_.end()) {
    slot.valid_until = TimedIntervals<MappingRef>::kForever;
    return slot;
  }
  auto hit = it->second.find(pc, time, /*or_earliest_later=*/true);
  slot.mapping = hit.value;
  slot.valid_from = hit.valid_from;
  slot.valid_until = hit.valid_until;
  return slot;
}

const CfiRule* Unwinder::cachedRuleFor(PcInfo& info) {
  if (info.rule_known) {
    if (info.rule_counted) {
      ++counters_.rule_lookups;
      ++counters_.rule_cache_hits;
    }
    return info.rule;
  }
  info.rule = ruleFor(*info.mapping, info.pc);
  info.rule_known = true;
  info.rule_counted = objects_[info.mapping->object].cfi != nullptr;
  return info.rule;
}

bool Unwinder::isJit(uint32_t pid, uint64_t pc, uint64_t time) const {
  auto it = jit_.find(pid);
  return it != jit_.end() && it->second.find(pc, time, /*or_earliest_later=*/true).value;
}

const CfiRule* Unwinder::ruleFor(const MappingRef& mapping, uint64_t pc) {
  if (mapping.object == kAnonymous) return nullptr;
  Object& object = objects_[mapping.object];
  if (!object.tried) {
    object.tried = true;
    Result<std::unique_ptr<CfiTable>> table = CfiTable::create(*object.symbols);
    if (table) {
      object.cfi = table.take();
    } else {
      ++counters_.objects_without_cfi;
    }
  }
  if (!object.cfi) return nullptr;
  // Runtime pc -> file offset -> ELF virtual address through the PT_LOAD segments.
  uint64_t offset = pc - mapping.start + mapping.file_offset;
  uint64_t vaddr = offset;
  for (const auto& segment : object.symbols->segments) {
    if (offset >= segment.file_offset && offset - segment.file_offset < segment.file_size) {
      vaddr = segment.vaddr + (offset - segment.file_offset);
      break;
    }
  }
  ++counters_.rule_lookups;
  uint64_t hits = object.cfi->cacheHits();
  const CfiRule* rule = object.cfi->tryLookup(vaddr);
  counters_.rule_cache_hits += object.cfi->cacheHits() - hits;
  return rule;
}

Unwinder::StepResult Unwinder::frameStep(UnwindRegisters& regs, const StackMemory& memory) const {
  if (!regs.bp_known || regs.bp < regs.sp) return StepResult::kNoRule;
  uint64_t caller_bp = 0, return_address = 0;
  if (!memory.read(regs.bp, caller_bp) || !memory.read(regs.bp + 8, return_address))
    return StepResult::kExhausted;
  if (return_address == 0) return StepResult::kOutermost;
  regs.sp = regs.bp + 16;
  regs.bp = caller_bp;
  regs.ip = return_address;
  return StepResult::kOk;
}

Unwinder::StepResult Unwinder::step(uint32_t pid, uint64_t time, UnwindRegisters& regs,
                                    const StackMemory& memory, bool is_leaf,
                                    bool allow_frame_pointer, bool& used_cfi) {
  used_cfi = false;
  // A return address points after its call: look the caller up inside the call.
  uint64_t pc = is_leaf ? regs.ip : regs.ip - 1;
  PcInfo& info = pcInfo(pid, pc, time);
  const MappingRef* mapping = info.mapping;
  if (mapping != nullptr && mapping->object != kAnonymous) {
    if (const CfiRule* rule = cachedRuleFor(info)) {
      ExpressionContext context{.regs = regs, .memory = memory};
      if (!cfaOf(*rule, context, context.cfa)) return StepResult::kBad;
      context.cfa_known = true;
      if (rule->return_address.kind == RegisterRule::kUndefined) return StepResult::kOutermost;
      if (rule->return_address.kind != RegisterRule::kExpression) return StepResult::kBad;
      Located ra = locate(rule->return_address, rule->simple_return_address, context);
      if (!ra.ok) return StepResult::kBad;
      uint64_t return_address = ra.value;
      if (ra.is_address && !memory.read(ra.value, return_address)) return StepResult::kExhausted;
      UnwindRegisters caller = regs;
      if (rule->rbp.kind == RegisterRule::kUndefined) {
        caller.bp_known = false;
      } else if (rule->rbp.kind == RegisterRule::kExpression) {
        Located bp = locate(rule->rbp, rule->simple_rbp, context);
        uint64_t value = bp.ok ? bp.value : 0;
        caller.bp_known = bp.ok && (!bp.is_address || memory.read(bp.value, value));
        caller.bp = value;
      }
      if (return_address == 0) return StepResult::kOutermost;
      if (context.cfa <= regs.sp) return StepResult::kBad;
      caller.sp = context.cfa;
      caller.ip = return_address;
      regs = caller;
      used_cfi = true;
      return StepResult::kOk;
    }
  }
  // No CFI here: JIT code (named by a perf map) and code an FDE does not
  // cover (V8's embedded builtins) keep frame pointers.
  bool jit = (mapping == nullptr || mapping->object == kAnonymous) && isJit(pid, pc, time);
  bool uncovered_object = mapping != nullptr && mapping->object != kAnonymous;
  if (allow_frame_pointer && (jit || uncovered_object)) return frameStep(regs, memory);
  return mapping == nullptr && !jit ? StepResult::kBad : StepResult::kNoRule;
}

UnwindSummary Unwinder::finish(UnwindSummary summary, std::vector<uint64_t>& frames, size_t first) {
  ++counters_.samples;
  bool complete = summary.end == UnwindEnd::kOutermost || summary.end == UnwindEnd::kSpliced;
  if (complete) {
    ++counters_.complete;
  } else {
    ++counters_.stopped;
    frames.push_back(kUnwindStopAddress);
  }
  counters_.frames += frames.size() - first;
  return summary;
}

UnwindResult Unwinder::unwind(uint32_t pid, uint64_t time, const UnwindRegisters& start,
                              const StackMemory& memory) {
  return repair(pid, time, start, memory, {});
}

UnwindResult Unwinder::repair(uint32_t pid, uint64_t time, const UnwindRegisters& start,
                              const StackMemory& memory, std::span<const uint64_t> fp_frames) {
  UnwindResult result;
  static_cast<UnwindSummary&>(result) = walk(pid, time, start, memory, fp_frames, result.frames);
  return result;
}

UnwindSummary Unwinder::walk(uint32_t pid, uint64_t time, const UnwindRegisters& start,
                             const StackMemory& memory, std::span<const uint64_t> fp_frames,
                             std::vector<uint64_t>& frames) {
  const size_t first = frames.size();
  UnwindSummary result;
  if (start.ip == 0) {
    result.end = UnwindEnd::kBadFrame;
    return finish(result, frames, first);
  }
  bool hybrid = !fp_frames.empty();
  UnwindRegisters regs = start;
  frames.push_back(regs.ip);
  auto depth = [&] { return frames.size() - first; };
  while (true) {
    if (depth() >= kMaxFrames) {
      result.end = UnwindEnd::kDepthLimit;
      break;
    }
    bool used_cfi = false;
    StepResult step_result =
        step(pid, time, regs, memory, depth() == 1, /*allow_frame_pointer=*/true, used_cfi);
    if (step_result == StepResult::kOk) {
      (used_cfi ? result.cfi_steps : result.frame_pointer_steps) += 1;
      uint64_t pc = regs.ip - 1;
      if (pcInfo(pid, pc, time).mapping == nullptr && !isJit(pid, pc, time)) {
        result.end = UnwindEnd::kBadFrame;
        break;
      }
      if (hybrid) {
        auto match = std::find(fp_frames.begin() + 1, fp_frames.end(), regs.ip);
        if (match != fp_frames.end()) {
          frames.insert(frames.end(), match, fp_frames.end());
          if (depth() > kMaxFrames) frames.resize(first + kMaxFrames);
          result.end = UnwindEnd::kSpliced;
          break;
        }
      }
      frames.push_back(regs.ip);
      continue;
    }
    result.end = step_result == StepResult::kOutermost   ? UnwindEnd::kOutermost
                 : step_result == StepResult::kExhausted ? UnwindEnd::kStackExhausted
                 : step_result == StepResult::kNoRule    ? UnwindEnd::kNoRule
                                                         : UnwindEnd::kBadFrame;
    break;
  }
  // Hybrid: when the copy could not even step out of the leaf, the kernel's
  // frame-pointer walk is the better answer.
  if (hybrid && depth() == 1 && result.end != UnwindEnd::kOutermost) {
    frames.resize(first);
    frames.insert(frames.end(), fp_frames.begin(), fp_frames.end());
    result.end = UnwindEnd::kSpliced;
  }
  return finish(result, frames, first);
}

}  // namespace incise::analyzer
