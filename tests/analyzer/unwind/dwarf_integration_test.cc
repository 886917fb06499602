// -g dwarf / hybrid end to end, with real BPF (label integration): the
// omit_fp workload (main -> level1 -> level2 -> hot_leaf_work, built without
// frame pointers) has broken frame-pointer stacks, and whole ones once
// unwound offline; a node --perf-basic-prof script's JS functions show up in
// unwound stacks with native frames below them. Reports see the unwound
// stacks through analyzer::Trace, as here.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "analyzer/model/stack_namer.h"
#include "analyzer/model/trace.h"
#include "tests/recorder/recorder_test_support.h"
#include "tests/workloads/workload_run.h"

namespace incise::testing {
namespace {

using analyzer::FrameGrouping;
using analyzer::StackNamer;
using analyzer::Trace;

struct HotStacks {
  size_t hot = 0;  // samples whose leaf-most user function is hot_leaf_work
  size_t hot_reaching_main = 0;
  size_t with_stop_marker = 0;
};

// Frames root first, as reports get them.
HotStacks hotStacks(const std::string& path) {
  HotStacks out;
  auto trace = Trace::open(path, analyzer::TraceOptions{});
  EXPECT_TRUE(trace) << (trace ? "" : trace.error().message());
  if (!trace) return out;
  StackNamer namer(**trace, FrameGrouping::kFunction);
  (*trace)->forEachRow<format::CpuSample>([&](const format::CpuSample& s) {
    std::vector<std::string> frames =
        namer.rootFirstNames(static_cast<uint32_t>(s.pid), s.stack_id, s.time);
    auto hot = std::find(frames.begin(), frames.end(), "hot_leaf_work");
    if (hot == frames.end()) return;
    ++out.hot;
    if (std::find(frames.begin(), hot, "main") != hot) ++out.hot_reaching_main;
    if (std::find(frames.begin(), frames.end(), "[unwind-stop]") != frames.end())
      ++out.with_stop_marker;
  });
  return out;
}

WorkloadRun recordOmitFp(const std::string& path, const std::string& mode) {
  return run_workload(INCISE_RECORD_BIN,
                      {"-o", path, "-g", mode, "-F", "199", "--no-sched", "--locks", "off", "--",
                       std::string(INCISE_WORKLOADS_DIR) + "/omit_fp", "--seconds", "2"});
}

TEST(DwarfUnwinding, FramePointerStacksOfOmitFpAreBroken) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("omit_fp_fp.trace");
  WorkloadRun run = recordOmitFp(path, "fp");
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  HotStacks stacks = hotStacks(path);
  ASSERT_GT(stacks.hot, 50u);
  // Without frame pointers the kernel's walk loses the callers.
  EXPECT_LT(stacks.hot_reaching_main, stacks.hot);
}

TEST(DwarfUnwinding, EveryOmitFpSampleReachesMainInDwarfMode) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("omit_fp_dwarf.trace");
  WorkloadRun run = recordOmitFp(path, "dwarf");
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  HotStacks stacks = hotStacks(path);
  ASSERT_GT(stacks.hot, 50u);
  EXPECT_EQ(stacks.hot_reaching_main, stacks.hot);
  EXPECT_EQ(stacks.with_stop_marker, 0u);
}

TEST(DwarfUnwinding, HybridRepairsOmitFpStacksWithA512ByteCopy) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("omit_fp_hybrid.trace");
  WorkloadRun run = recordOmitFp(path, "hybrid=512");
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  HotStacks stacks = hotStacks(path);
  ASSERT_GT(stacks.hot, 50u);
  EXPECT_EQ(stacks.hot_reaching_main, stacks.hot);
}

TEST(DwarfUnwinding, NodeJsFunctionsAppearAboveNativeFrames) {
  INCISE_REQUIRE_RECORDING();
  std::string script = tempTracePath("hot.js");
  std::ofstream(script) << "function hotJsLoop(n) { let s = 0; for (let i = 0; i < n; i++) "
                           "s = (s + i * 7) % 1000003; return s; }\n"
                           "function outerJsCaller() { let t = 0; const end = Date.now() + 2000; "
                           "while (Date.now() < end) t += hotJsLoop(100000); return t; }\n"
                           "console.log('total=' + outerJsCaller());\n";
  std::string path = tempTracePath("node_dwarf.trace");
  WorkloadRun run =
      run_workload(INCISE_RECORD_BIN, {"-o", path, "-g", "dwarf", "--no-sched", "--locks", "off",
                                       "--", "/usr/bin/node", "--perf-basic-prof", script});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  auto trace = Trace::open(path, analyzer::TraceOptions{});
  ASSERT_TRUE(trace) << trace.error().message();
  StackNamer namer(**trace, FrameGrouping::kFunction);
  size_t js = 0, js_above_native = 0;
  (*trace)->forEachRow<format::CpuSample>([&](const format::CpuSample& s) {
    std::vector<std::string> frames =
        namer.rootFirstNames(static_cast<uint32_t>(s.pid), s.stack_id, s.time);
    auto leaf_js = std::find_if(frames.begin(), frames.end(), [](const std::string& f) {
      return f.find("hotJsLoop") != std::string::npos;
    });
    if (leaf_js == frames.end()) return;
    ++js;
    // Native frames nearer the root: node's own C++ and main.
    bool native_below = std::any_of(frames.begin(), leaf_js, [](const std::string& f) {
      return f.find("node::Start") != std::string::npos;
    });
    if (native_below) ++js_above_native;
  });
  EXPECT_GT(js, 20u);
  EXPECT_GT(js_above_native, js / 2);
}

}  // namespace
}  // namespace incise::testing
