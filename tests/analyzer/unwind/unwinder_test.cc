// The offline unwinder on a real stack with real CFI: a program compiled at
// test time without frame pointers dumps its leaf's registers and stack; the
// unwinder must walk it to main and _start, stop cleanly with [unwind-stop]
// on every truncation of the copy, step through a JIT frame by frame pointer
// and repair a broken frame-pointer stack (hybrid).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include <dwarf.h>

#include "analyzer/symbolize/symbolizer.h"
#include "analyzer/unwind/dwarf_expression.h"
#include "analyzer/unwind/unwind_marker.h"
#include "analyzer/unwind/unwinder.h"
#include "tests/analyzer/unwind/stack_dump_program.h"

namespace incise::analyzer {
namespace {

using testing::recordStackDump;
using testing::StackDump;

std::vector<std::string> functionNames(Symbolizer& symbolizer, uint32_t pid,
                                       const std::vector<uint64_t>& frames) {
  std::vector<std::string> names;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (isUnwindStop(frames[i])) {
      names.emplace_back(kUnwindStopName);
      continue;
    }
    names.push_back(symbolizer.lookup(pid, i == 0 ? frames[i] : frames[i] - 1, 1).function);
  }
  return names;
}

class UnwinderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new incise::testing::TempDir();
    dump_ = new StackDump(recordStackDump(*dir_));
  }
  static void TearDownTestSuite() {
    delete dump_;
    delete dir_;
  }
  void SetUp() override {
    ASSERT_FALSE(dump_->stack.empty()) << "the stack-dump program did not run";
  }
  static incise::testing::TempDir* dir_;
  static StackDump* dump_;
};
incise::testing::TempDir* UnwinderTest::dir_ = nullptr;
StackDump* UnwinderTest::dump_ = nullptr;

TEST_F(UnwinderTest, FullCopyReachesMainAndTheOutermostFrame) {
  Unwinder unwinder(dump_->metadata);
  UnwindResult result = unwinder.unwind(dump_->pid, 1, dump_->regs, dump_->memory());
  Symbolizer symbolizer(dump_->metadata);
  std::vector<std::string> names = functionNames(symbolizer, dump_->pid, result.frames);
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names[0], "leaf");
  EXPECT_EQ(names[1], "level_b");
  EXPECT_EQ(names[2], "level_a");
  EXPECT_EQ(names[3], "main");
  EXPECT_EQ(result.end, UnwindEnd::kOutermost) << unwindEndName(result.end);
  EXPECT_FALSE(isUnwindStop(result.frames.back()));
  EXPECT_GE(result.cfi_steps, 4u);
  EXPECT_EQ(unwinder.counters().complete, 1u);
  // The same pcs again come from the rule cache: every second lookup hits.
  uint64_t lookups = unwinder.counters().rule_lookups;
  uint64_t hits = unwinder.counters().rule_cache_hits;
  UnwindResult again = unwinder.unwind(dump_->pid, 1, dump_->regs, dump_->memory());
  EXPECT_EQ(again.frames, result.frames);
  EXPECT_EQ(unwinder.counters().rule_lookups, 2 * lookups);
  EXPECT_EQ(unwinder.counters().rule_cache_hits, hits + lookups);
}

TEST_F(UnwinderTest, WalkAppendsAfterWhatTheBufferHeld) {
  Unwinder unwinder(dump_->metadata);
  UnwindResult result = unwinder.unwind(dump_->pid, 1, dump_->regs, dump_->memory());
  std::vector<uint64_t> frames = {7, 8, 9};
  UnwindSummary summary = unwinder.walk(dump_->pid, 1, dump_->regs, dump_->memory(), {}, frames);
  EXPECT_EQ(summary.end, result.end);
  ASSERT_EQ(frames.size(), 3 + result.frames.size());
  EXPECT_EQ(frames[2], 9u);
  EXPECT_TRUE(std::equal(result.frames.begin(), result.frames.end(), frames.begin() + 3));
  // A stopped walk appends its marker after its own frames.
  frames.assign({1});
  unwinder.walk(dump_->pid, 1, dump_->regs, dump_->memory(0), {}, frames);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0], 1u);
  EXPECT_TRUE(isUnwindStop(frames[2]));
  UnwindCounters sum = unwinder.counters();
  sum += unwinder.counters();
  EXPECT_EQ(sum.samples, 2 * unwinder.counters().samples);
}

TEST_F(UnwinderTest, EveryTruncationStopsCleanlyWithAPrefixOfTheFullWalk) {
  Unwinder unwinder(dump_->metadata);
  UnwindResult full = unwinder.unwind(dump_->pid, 1, dump_->regs, dump_->memory());
  ASSERT_EQ(full.end, UnwindEnd::kOutermost);
  size_t stopped = 0;
  for (size_t bytes = 0; bytes <= dump_->stack.size(); bytes += 8) {
    UnwindResult cut = unwinder.unwind(dump_->pid, 1, dump_->regs, dump_->memory(bytes));
    ASSERT_FALSE(cut.frames.empty());
    if (cut.end == UnwindEnd::kOutermost) {
      EXPECT_EQ(cut.frames, full.frames) << bytes << " bytes";
      continue;
    }
    ++stopped;
    EXPECT_EQ(cut.end, UnwindEnd::kStackExhausted) << bytes << " bytes";
    ASSERT_TRUE(isUnwindStop(cut.frames.back())) << bytes << " bytes";
    ASSERT_LE(cut.frames.size() - 1, full.frames.size());
    EXPECT_TRUE(std::equal(cut.frames.begin(), cut.frames.end() - 1, full.frames.begin()))
        << bytes << " bytes";
  }
  EXPECT_GT(stopped, 4u);
  // 0 bytes: only the leaf, then the marker.
  UnwindResult none = unwinder.unwind(dump_->pid, 1, dump_->regs, dump_->memory(0));
  EXPECT_EQ(none.frames.size(), 2u);
  EXPECT_EQ(none.frames[0], dump_->regs.ip);
}

TEST_F(UnwinderTest, GarbageStacksNeverCrashAndAlwaysEnd) {
  Unwinder unwinder(dump_->metadata);
  std::mt19937_64 rng(3);
  std::string noise = dump_->stack;
  for (int round = 0; round < 200; ++round) {
    for (int flips = 0; flips < 16; ++flips) noise[rng() % noise.size()] = static_cast<char>(rng());
    StackDump mutated = *dump_;
    mutated.stack = noise;
    UnwindResult r = unwinder.unwind(dump_->pid, 1, mutated.regs, mutated.memory());
    EXPECT_LE(r.frames.size(), Unwinder::kMaxFrames + 1);
  }
}

TEST_F(UnwinderTest, JitFrameIsSteppedByFramePointerIntoNativeFrames) {
  Unwinder native(dump_->metadata);
  UnwindResult full = native.unwind(dump_->pid, 1, dump_->regs, dump_->memory());
  // A JIT frame called by the leaf: [bp] = leaf's rbp, [bp+8] = a return into the leaf.
  format::Metadata metadata = dump_->metadata;
  constexpr uint64_t kJitStart = 0x7f0000100000;
  metadata.perf_maps.push_back(
      format::PerfMapSnapshot{.pid = dump_->pid,
                              .time = 0,
                              .entries = {{.start = kJitStart, .size = 0x100, .name = "js"}}});
  StackDump jit = *dump_;
  std::string frame(16, '\0');
  uint64_t saved_bp = dump_->regs.bp, return_address = dump_->regs.ip + 1;
  std::memcpy(frame.data(), &saved_bp, 8);
  std::memcpy(frame.data() + 8, &return_address, 8);
  jit.stack = frame + dump_->stack;
  jit.regs =
      UnwindRegisters{.ip = kJitStart + 0x10, .sp = dump_->regs.sp - 16, .bp = dump_->regs.sp - 16};
  Unwinder unwinder(metadata);
  UnwindResult result = unwinder.unwind(jit.pid, 1, jit.regs, jit.memory());
  EXPECT_EQ(result.end, UnwindEnd::kOutermost) << unwindEndName(result.end);
  EXPECT_EQ(result.frame_pointer_steps, 1u);
  ASSERT_EQ(result.frames.size(), full.frames.size() + 1);
  EXPECT_EQ(result.frames[0], kJitStart + 0x10);
  EXPECT_TRUE(std::equal(full.frames.begin() + 1, full.frames.end(), result.frames.begin() + 2));
  Symbolizer symbolizer(metadata);
  EXPECT_EQ(symbolizer.lookup(jit.pid, result.frames[0], 1).name, "js");
  // Without the perf map the same pc is no man's land: a clean stop.
  Unwinder no_map(dump_->metadata);
  UnwindResult stopped = no_map.unwind(jit.pid, 1, jit.regs, jit.memory());
  EXPECT_TRUE(isUnwindStop(stopped.frames.back()));
}

TEST_F(UnwinderTest, HybridRepairsABrokenFramePointerStack) {
  Unwinder unwinder(dump_->metadata);
  UnwindResult full = unwinder.unwind(dump_->pid, 1, dump_->regs, dump_->memory());
  ASSERT_GE(full.frames.size(), 5u);
  // The kernel's walk without frame pointers: the leaf, then frames from
  // main up (as if an FP-built caller chain resumed there) after a garbage one.
  std::vector<uint64_t> fp = {full.frames[0], 0x1234};
  fp.insert(fp.end(), full.frames.begin() + 3, full.frames.end());
  // (The leaf has a 4 KiB buffer: the copy must cover its frame to step out of it.)
  UnwindResult repaired = unwinder.repair(dump_->pid, 1, dump_->regs, dump_->memory(), fp);
  EXPECT_EQ(repaired.end, UnwindEnd::kSpliced);
  EXPECT_EQ(repaired.frames, full.frames);
  // No copy at all: the frame-pointer frames are kept as they were.
  UnwindResult kept = unwinder.repair(dump_->pid, 1, dump_->regs, dump_->memory(0), fp);
  EXPECT_EQ(kept.frames, fp);
}

TEST(DwarfExpression, PltStyleExpressionAndBadInput) {
  UnwindRegisters regs{.ip = 0x1000b, .sp = 0x7000, .bp = 0};
  uint8_t bytes[16] = {};
  StackMemory memory{.sp = 0x7000, .bytes = bytes};
  ExpressionContext context{.regs = regs, .memory = memory};
  // glibc PLT CFA: rsp + 8 + ((rip & 15) >= 11 ? 8 : 0)
  std::vector<Dwarf_Op> plt = {{.atom = DW_OP_breg7, .number = 8},
                               {.atom = DW_OP_breg16, .number = 0},
                               {.atom = DW_OP_lit15},
                               {.atom = DW_OP_and},
                               {.atom = DW_OP_lit11},
                               {.atom = DW_OP_ge},
                               {.atom = DW_OP_lit3},
                               {.atom = DW_OP_shl},
                               {.atom = DW_OP_plus}};
  Result<ExpressionValue> v = evaluateExpression(plt, context);
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_EQ(v->value, 0x7000u + 8 + 8);
  EXPECT_FALSE(evaluateExpression(std::vector<Dwarf_Op>{{.atom = DW_OP_plus}}, context));
  EXPECT_FALSE(evaluateExpression(std::vector<Dwarf_Op>{{.atom = DW_OP_breg3}}, context));
  EXPECT_FALSE(evaluateExpression(
      std::vector<Dwarf_Op>{{.atom = DW_OP_lit0}, {.atom = DW_OP_deref}}, context));
  EXPECT_FALSE(evaluateExpression({}, context));
}

// The simple forms the unwinder applies without the interpreter must give
// what the interpreter gives for the same rule, and other shapes must stay
// general.
TEST(SimpleCfiRules, AgreeWithTheInterpreterAndLeaveOtherShapesGeneral) {
  uint8_t bytes[64] = {};
  UnwindRegisters regs{.ip = 0x401234, .sp = 0x7000, .bp = 0x7020};
  StackMemory memory{.sp = 0x7000, .bytes = bytes};
  const std::vector<std::vector<Dwarf_Op>> cfas = {
      {{.atom = DW_OP_breg7, .number = 8}},
      {{.atom = DW_OP_breg6, .number = 16}},
      {{.atom = DW_OP_bregx, .number = 7, .number2 = 0x30}},
      {{.atom = DW_OP_breg7, .number = static_cast<Dwarf_Word>(-8)}},
  };
  for (const auto& ops : cfas) {
    SimpleCfa simple = simpleCfa(ops);
    ASSERT_GE(simple.regno, 0);
    uint64_t base = 0;
    ASSERT_TRUE(regs.get(simple.regno, base));
    ExpressionContext context{.regs = regs, .memory = memory};
    Result<ExpressionValue> v = evaluateExpression(ops, context);
    ASSERT_TRUE(v);
    EXPECT_EQ(base + simple.offset, v->value);
  }
  const std::vector<std::vector<Dwarf_Op>> locations = {
      {{.atom = DW_OP_call_frame_cfa}},
      {{.atom = DW_OP_call_frame_cfa}, {.atom = DW_OP_plus_uconst, .number = 16}},
      {{.atom = DW_OP_call_frame_cfa},
       {.atom = DW_OP_plus_uconst, .number = static_cast<Dwarf_Word>(-16)}},
      {{.atom = DW_OP_call_frame_cfa},
       {.atom = DW_OP_plus_uconst, .number = 8},
       {.atom = DW_OP_stack_value}},
  };
  for (const auto& ops : locations) {
    SimpleLocation simple = simpleLocation(ops);
    ASSERT_NE(simple.kind, SimpleLocation::kGeneral);
    ExpressionContext context{.regs = regs, .memory = memory, .cfa = 0x7040, .cfa_known = true};
    Result<ExpressionValue> v = evaluateExpression(ops, context);
    ASSERT_TRUE(v);
    EXPECT_EQ(context.cfa + simple.offset, v->value);
    EXPECT_EQ(simple.kind == SimpleLocation::kSavedAtCfaPlus, v->is_address);
  }
  // PLT-style CFA, a register-named value, a deref: interpreted.
  EXPECT_LT(
      simpleCfa(std::vector<Dwarf_Op>{
                    {.atom = DW_OP_breg7, .number = 8}, {.atom = DW_OP_lit8}, {.atom = DW_OP_plus}})
          .regno,
      0);
  EXPECT_EQ(simpleLocation(std::vector<Dwarf_Op>{{.atom = DW_OP_reg6}}).kind,
            SimpleLocation::kGeneral);
  EXPECT_EQ(
      simpleLocation(std::vector<Dwarf_Op>{{.atom = DW_OP_call_frame_cfa}, {.atom = DW_OP_deref}})
          .kind,
      SimpleLocation::kGeneral);
}

}  // namespace
}  // namespace incise::analyzer
