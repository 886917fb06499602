// stackFrames on stacks as the recorder stores them: the recorder's own
// tracing frames go, garbage past a broken user stack is cut and marked,
// 0x0 never shows, and return addresses are looked up at address - 1.
#include "analyzer/symbolize/stack_frames.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <string>
#include <vector>

#include "analyzer/symbolize/symbolizer.h"
#include "objfile/kallsyms.h"

namespace incise::analyzer {
namespace {

constexpr uint32_t kPid = 31;
constexpr uint64_t kJit = 0xffffffffc0025fce;  // an unnamed BPF JIT image

SymbolizerOptions isolated() {
  SymbolizerOptions options;
  options.system_debug_dir.clear();
  options.use_debuginfod = false;
  return options;
}

format::Metadata metadata() {
  format::Metadata m;
  m.kernel_symbols = objfile::parseKallsyms(
      "ffffffff81100000 T bpf_trace_run4\n"
      "ffffffff81100400 t __bpf_trace_sched_switch\n"
      "ffffffff81200000 T __schedule\n"
      "ffffffff81201000 T schedule\n"
      "ffffffff81202000 T do_nanosleep\n");
  format::ObjectSymbols app;
  app.path = "/opt/app";
  app.symbols = {{0x1000, 0x100, "leaf_fn"}, {0x1100, 0x100, "caller_fn"}, {0x1200, 0x100, "main"}};
  app.segments = {{0x1000, 0x1000, 0x1000, 0x1000, 5}};
  m.objects.push_back(app);
  format::Mapping mapping;
  mapping.pid = kPid;
  mapping.start = 0x400000;
  mapping.end = 0x401000;
  mapping.file_offset = 0x1000;
  mapping.path = "/opt/app";
  mapping.prot = PROT_READ | PROT_EXEC;
  m.mappings.push_back(mapping);
  format::Mapping data = mapping;  // the heap: mapped, not code
  data.start = 0x600000;
  data.end = 0x700000;
  data.path = "[heap]";
  data.prot = PROT_READ | PROT_WRITE;
  m.mappings.push_back(data);
  return m;
}

std::vector<std::string> names(Symbolizer& symbolizer, const std::vector<uint64_t>& addresses) {
  std::vector<StackFrame> frames;
  stackFrames(symbolizer, kPid, addresses, 0, frames);
  std::vector<std::string> out;
  for (const StackFrame& frame : frames) out.push_back(frame.frame->name);
  return out;
}

TEST(StackFrames, TheRecordersTracingFramesAreDropped) {
  const format::Metadata m = metadata();
  Symbolizer symbolizer(m, isolated());
  // An off-CPU stack taken from the sched_switch tracepoint's BPF program.
  EXPECT_EQ(names(symbolizer, {kJit, 0xffffffff81100010, 0xffffffff81100420, 0xffffffff81200040,
                               0xffffffff81201010, 0x400010, 0x400110}),
            (std::vector<std::string>{"__schedule", "schedule", "leaf_fn", "caller_fn"}));
  // An unnamed kernel leaf with no machinery after it is the workload's.
  EXPECT_EQ(names(symbolizer, {kJit, 0xffffffff81202010}),
            (std::vector<std::string>{"[unknown] 0xffffffffc0025fce", "do_nanosleep"}));
}

TEST(StackFrames, ABrokenUserStackIsCutAndMarked) {
  const format::Metadata m = metadata();
  Symbolizer symbolizer(m, isolated());
  const std::string cut(kStackCutName);
  // 0x0 ends the chain: never a frame.
  EXPECT_EQ(names(symbolizer, {0x400010, 0x400110, 0x0, 0x400210}),
            (std::vector<std::string>{"leaf_fn", "caller_fn", cut}));
  // A "return address" in the heap or in nothing mapped.
  EXPECT_EQ(names(symbolizer, {0x400010, 0x600100, 0x400210}),
            (std::vector<std::string>{"leaf_fn", cut}));
  EXPECT_EQ(names(symbolizer, {0x400010, 0x7f0000001234, 0x400210}),
            (std::vector<std::string>{"leaf_fn", cut}));
  // The user leaf is where the CPU was: kept even when no mapping holds it.
  EXPECT_EQ(names(symbolizer, {0x7f0000001234, 0x400110}),
            (std::vector<std::string>{"[unknown] 0x7f0000001234", "caller_fn"}));
  // A whole stack is untouched.
  EXPECT_EQ(names(symbolizer, {0x400010, 0x400110, 0x400210}),
            (std::vector<std::string>{"leaf_fn", "caller_fn", "main"}));
  // A user leaf of 0 (a call through a null pointer) leaves the kernel part.
  EXPECT_EQ(names(symbolizer, {0xffffffff81202010, 0x0}),
            (std::vector<std::string>{"do_nanosleep", cut}));
}

TEST(StackFrames, ReturnAddressesAreLookedUpAtTheCall) {
  const format::Metadata m = metadata();
  Symbolizer symbolizer(m, isolated());
  // 0x400100 returns just past caller_fn's start: the call was leaf_fn's last
  // instruction, so the frame is leaf_fn's (at 0x4000ff).
  std::vector<StackFrame> frames;
  stackFrames(symbolizer, kPid, std::vector<uint64_t>{0x400100, 0x400100}, 0, frames);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].frame->name, "caller_fn");
  EXPECT_EQ(frames[0].address, 0x400100u);
  EXPECT_EQ(frames[1].frame->name, "leaf_fn");
  EXPECT_EQ(frames[1].address, 0x4000ffu);
}

}  // namespace
}  // namespace incise::analyzer
