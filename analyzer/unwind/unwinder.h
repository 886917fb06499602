// Unwinder: user stacks of -g dwarf / hybrid samples, rebuilt offline from
// the registers and stack copy kept with each sample and the CFI (.eh_frame)
// embedded in the trace. Nothing is read from the recording host.
//
// A walk starts at (ip, sp, bp). At each pc the unwinder finds the object
// mapped there at that time, turns the runtime pc into the object's virtual
// address (mapping + PT_LOAD segments), and applies that pc's CFI rules
// (cached per object and address) with memory reads served from the copy.
// Where the pc is JIT code covered by a perf map, or an object address no FDE
// covers, it steps by frame pointer (caller pc = [bp+8], caller bp = [bp])
// and carries on into native frames. A walk ends cleanly at the outermost
// frame (return address undefined, e.g. _start); a step that cannot be made
// or makes no sense (copy exhausted, the stack pointer not moving up, a pc in
// no mapping) ends it with the kUnwindStopAddress marker frame.
//
// Hybrid samples carry the kernel's frame-pointer walk as well: repair()
// unwinds from the registers by CFI only until a return address it finds is
// also in the frame-pointer stack, and takes the frame-pointer frames from
// there (they are right from that point up), so a small copy fixes the leaf
// frames in code without frame pointers.
//
//   Unwinder unwinder(reader.metadata());
//   UnwindResult r = unwinder.unwind(pid, time, {.ip = ip, .sp = sp, .bp = bp},
//                                    StackMemory{.sp = sp, .bytes = copy});
//   r.frames;  // leaf first; ends with kUnwindStopAddress when it stopped early
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/symbolize/timed_intervals.h"
#include "analyzer/unwind/cfi_table.h"
#include "analyzer/unwind/stack_memory.h"
#include "analyzer/unwind/unwind_registers.h"
#include "base/counters.h"
#include "format/metadata.h"

namespace incise::analyzer {

enum class UnwindEnd : uint8_t {
  kOutermost,       // reached a frame with an undefined return address (or pc 0)
  kStackExhausted,  // the next step needed memory beyond the copy
  kNoRule,          // no CFI and no frame pointer to follow
  kBadFrame,        // a step produced an impossible frame (sp not moving up, pc unmapped)
  kDepthLimit,
  kSpliced,  // hybrid: joined the frame-pointer stack
};

struct UnwindSummary {
  UnwindEnd end = UnwindEnd::kOutermost;
  size_t cfi_steps = 0;
  size_t frame_pointer_steps = 0;
};

struct UnwindResult : UnwindSummary {
  std::vector<uint64_t> frames;  // user frames, leaf first
};

// What the unwinder of stack copies (-g dwarf, hybrid) did and could not do.
#define INCISE_UNWIND_COUNTERS(X)                                                                \
  X(samples, kInfo, "samples unwound from their stack copies")                                   \
  X(complete, kInfo, "unwinds that reached the outermost frame or joined a frame-pointer stack") \
  X(stopped, kDataLoss, "unwinds that stopped early, marked [unwind-stop]")                      \
  X(frames, kInfo, "frames recovered")                                                           \
  X(rule_lookups, kInfo, "CFI rule lookups")                                                     \
  X(rule_cache_hits, kInfo, "CFI rule lookups answered from the per-address cache")              \
  X(objects_without_cfi, kDataLoss, "objects reached by an unwind that have no CFI")

struct UnwindCounters {
  INCISE_COUNTER_FIELDS(INCISE_UNWIND_COUNTERS)
  INCISE_COUNTER_VISITOR(INCISE_UNWIND_COUNTERS, UnwindCounters)
};

class Unwinder {
 public:
  static constexpr size_t kMaxFrames = 127;

  // `metadata` must outlive the unwinder: its objects' tables are used in place.
  explicit Unwinder(const format::Metadata& metadata);
  ~Unwinder();
  Unwinder(const Unwinder&) = delete;
  Unwinder& operator=(const Unwinder&) = delete;

  UnwindResult unwind(uint32_t pid, uint64_t time, const UnwindRegisters& regs,
                      const StackMemory& memory);
  // Hybrid: `fp_frames` are the kernel's user frames of the same sample, leaf first.
  UnwindResult repair(uint32_t pid, uint64_t time, const UnwindRegisters& regs,
                      const StackMemory& memory, std::span<const uint64_t> fp_frames);
  // unwind (fp_frames empty) or repair, appending the frames to `frames`
  // instead of allocating: the streaming path calls this once per sample.
  UnwindSummary walk(uint32_t pid, uint64_t time, const UnwindRegisters& regs,
                     const StackMemory& memory, std::span<const uint64_t> fp_frames,
                     std::vector<uint64_t>& frames);

  const UnwindCounters& counters() const { return counters_; }

 private:
  struct Object {
    const format::ObjectSymbols* symbols = nullptr;  // null: nothing embedded
    std::unique_ptr<CfiTable> cfi;                   // null: no .eh_frame (or unusable)
    bool tried = false;
  };
  struct MappingRef {
    uint32_t object = UINT32_MAX;  // index into objects_; UINT32_MAX: anonymous
    uint64_t start = 0;
    uint64_t file_offset = 0;
  };
  enum class StepResult { kOk, kOutermost, kExhausted, kNoRule, kBad };
  // What one (pid, pc) resolves to, valid for sample times in [valid_from,
  // valid_until): the mapping there and, once a step needed it, its CFI rule.
  // Hot pcs recur in every sample, so this direct-mapped cache answers most
  // steps without the mapping search, address translation or rule hash.
  struct PcInfo {
    bool filled = false;
    bool rule_known = false;
    bool rule_counted = false;  // the lookup reached a CFI table (counted in counters_)
    uint32_t pid = 0;
    uint64_t pc = 0;
    uint64_t valid_from = 0;
    uint64_t valid_until = 0;
    const MappingRef* mapping = nullptr;
    const CfiRule* rule = nullptr;
  };
  static constexpr unsigned kPcCacheBits = 11;

  StepResult step(uint32_t pid, uint64_t time, UnwindRegisters& regs, const StackMemory& memory,
                  bool is_leaf, bool allow_frame_pointer, bool& used_cfi);
  StepResult frameStep(UnwindRegisters& regs, const StackMemory& memory) const;
  const CfiRule* ruleFor(const MappingRef& mapping, uint64_t pc);
  const CfiRule* cachedRuleFor(PcInfo& info);
  bool isJit(uint32_t pid, uint64_t pc, uint64_t time) const;
  PcInfo& pcInfo(uint32_t pid, uint64_t pc, uint64_t time);
  UnwindSummary finish(UnwindSummary summary, std::vector<uint64_t>& frames, size_t first);

  std::vector<Object> objects_;
  std::unordered_map<std::string, uint32_t> object_by_key_;
  std::unordered_map<uint32_t, TimedIntervals<MappingRef>> mappings_;
  std::unordered_map<uint32_t, TimedIntervals<bool>> jit_;
  std::vector<PcInfo> pc_cache_;
  UnwindCounters counters_;
};

std::string_view unwindEndName(UnwindEnd end);

}  // namespace incise::analyzer
