// Mappings from the kernel's mmap records, the vDSO and the recorder's own
// frames, with real BPF on programs built with the tests
// (tests/recorder/programs/): every check reads the trace through the reader
// (TraceView) or the analyzer, as someone on another machine would.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <span>
#include <string>
#include <vector>

#include "format/event_kinds.h"
#include "tests/recorder/recorder_test_support.h"
#include "tests/workloads/workload_run.h"

namespace incise::testing {
namespace {

WorkloadRun record(const std::string& trace, std::vector<std::string> recorder_args,
                   std::vector<std::string> command) {
  std::vector<std::string> all = {"-o", trace};
  all.insert(all.end(), recorder_args.begin(), recorder_args.end());
  all.push_back("--");
  all.insert(all.end(), command.begin(), command.end());
  return run_workload(INCISE_RECORD_BIN, all);
}

// The executable mappings the trace holds for `pid` whose path holds `name`
// ("/libstdc++.so.6" is the link to libstdc++.so.6.0.30: the kernel names
// the file).
size_t executableMappings(TraceView& trace, uint32_t pid, const std::string& name,
                          bool* with_build_id = nullptr) {
  size_t count = 0;
  for (const format::Mapping& m : trace.reader().metadata().mappings) {
    if (m.pid != pid || !(m.prot & PROT_EXEC) || m.path.find(name) == std::string::npos) continue;
    ++count;
    if (with_build_id) *with_build_id = !m.build_id.empty();
  }
  return count;
}

TEST(Mappings, AShortCxxProgramHasLibcAndLibstdcxxMappedEveryTime) {
  INCISE_REQUIRE_RECORDING();
  for (int run_index = 0; run_index < 20; ++run_index) {
    std::string path = tempTracePath("short_cxx.trace");
    WorkloadRun run = record(path, {"-F", "99"}, {INCISE_MAPPING_SHORT_CXX});
    ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
    const auto pid = static_cast<uint32_t>(run.number("pid"));
    ASSERT_NE(pid, 0u) << run.raw_stdout;
    TraceView trace(path);
    ASSERT_TRUE(trace.ok()) << trace.error();
    bool libc_id = false, libstdcxx_id = false;
    EXPECT_EQ(executableMappings(trace, pid, "/libc.so.6", &libc_id), 1u) << "run " << run_index;
    EXPECT_EQ(executableMappings(trace, pid, "/libstdc++.so.6", &libstdcxx_id), 1u)
        << "run " << run_index;
    EXPECT_EQ(executableMappings(trace, pid, "/short_cxx"), 1u) << "run " << run_index;
    EXPECT_TRUE(libc_id && libstdcxx_id) << "the kernel's records carry the build-id";
  }
}

TEST(Mappings, ALibraryLoadedMillisecondsBeforeExitResolves) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("dlopen_burn.trace");
  constexpr int kChildren = 3;
  WorkloadRun run =
      record(path, {"-F", "999"},
             {INCISE_MAPPING_DLOPEN_BURN, INCISE_MAPPING_PLUGIN, "30", std::to_string(kChildren)});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  const std::vector<format::CpuSample> samples = trace.rows<format::CpuSample>();
  for (int i = 0; i <= kChildren; ++i) {
    const auto pid = static_cast<uint32_t>(run.number("pid_" + std::to_string(i)));
    const uint64_t plugin = run.number("plugin_" + std::to_string(i));
    ASSERT_NE(pid, 0u) << run.raw_stdout;
    // Where the program says the function was loaded, the trace names it.
    EXPECT_EQ(trace.symbolize(pid, plugin), "burn_in_plugin") << "process " << i;
    EXPECT_EQ(executableMappings(trace, pid, "/libmapping_plugin.so"), 1u) << "process " << i;
    size_t of_pid = 0, in_plugin = 0;
    for (const format::CpuSample& s : samples) {
      if (s.pid != pid) continue;
      ++of_pid;
      if (trace.stackHasFunction(pid, s.stack_id, "burn_in_plugin")) ++in_plugin;
    }
    // 30 ms of CPU at 999 Hz: ~30 samples, nearly all inside the plugin.
    EXPECT_GT(of_pid, 5u) << "process " << i;
    EXPECT_GT(in_plugin * 2, of_pid) << "process " << i << ": " << in_plugin << " of " << of_pid;
  }
}

TEST(Mappings, ALibraryMappedOneMillisecondBeforeExitIsInTheTrace) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("dlopen_1ms.trace");
  constexpr int kChildren = 3;
  WorkloadRun run =
      record(path, {"-F", "999"},
             {INCISE_MAPPING_DLOPEN_BURN, INCISE_MAPPING_PLUGIN, "1", std::to_string(kChildren)});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  for (int i = 0; i <= kChildren; ++i) {
    const auto pid = static_cast<uint32_t>(run.number("pid_" + std::to_string(i)));
    const uint64_t plugin = run.number("plugin_" + std::to_string(i));
    ASSERT_NE(pid, 0u) << run.raw_stdout;
    // Too short for samples to be sure to land in it, but its mapping is
    // there, covering the address the process printed.
    size_t covering = 0;
    for (const format::Mapping& m : trace.reader().metadata().mappings) {
      if (m.pid == pid && m.start <= plugin && plugin < m.end &&
          m.path.find("/libmapping_plugin.so") != std::string::npos)
        ++covering;
    }
    EXPECT_EQ(covering, 1u) << "process " << i;
  }
}

// The embedded kernel symbol containing `address`, or "".
std::string kernelSymbol(TraceView& trace, uint64_t address) {
  const format::KernelSymbol* best = nullptr;
  for (const format::KernelSymbol& symbol : trace.reader().metadata().kernel_symbols) {
    if (symbol.address <= address && (!best || symbol.address > best->address)) best = &symbol;
  }
  return best ? best->name : "";
}

TEST(Mappings, OffCpuStacksOfASleeperHaveNoRecorderFrames) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("sleeper_own_frames.trace");
  // nanosleep blocks interruptibly, whose kernel stack only `all` takes.
  WorkloadRun run =
      record(path, {"--sched-stacks", "all"}, {std::string(INCISE_WORKLOADS_DIR) + "/sleeper"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  const auto tid = static_cast<uint32_t>(run.number("tid"));
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  size_t blocked = 0;
  for (const format::SchedSwitch& s : trace.rows<format::SchedSwitch>()) {
    if (s.prev_tid != tid || s.prev_state == 0 || s.stack_id == 0) continue;
    ++blocked;
    const std::span<const uint64_t> frames = trace.reader().stacks().frames(s.stack_id);
    ASSERT_FALSE(frames.empty());
    ASSERT_TRUE(format::isKernelAddress(frames.front()));
    // The leaf is core kernel text (the scheduler), not the module and BPF
    // JIT area above it; no frame is tracing glue.
    EXPECT_LT(frames.front(), 0xffffffffa0000000ull) << kernelSymbol(trace, frames.front());
    for (uint64_t frame : frames) {
      if (!format::isKernelAddress(frame)) continue;
      const std::string name = kernelSymbol(trace, frame);
      for (const char* glue :
           {"bpf_trace_run", "__bpf_trace_", "__traceiter_", "bpf_prog_", "trace_call_bpf"})
        EXPECT_EQ(name.rfind(glue, 0), std::string::npos) << name;
    }
    EXPECT_NE(kernelSymbol(trace, frames.front()).find("schedule"), std::string::npos)
        << kernelSymbol(trace, frames.front());
  }
  EXPECT_GE(blocked, run.number("nanosleep_calls"));
}

TEST(Mappings, VdsoFramesAreNamedInTop) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("clock_loop.trace");
  WorkloadRun run = record(path, {"-F", "999"}, {INCISE_MAPPING_CLOCK_LOOP, "400"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  ASSERT_GT(run.number("calls"), 0u);
  WorkloadRun top = run_workload(INCISE_ANALYZER_BIN, {"top", path, "--json", "--limit", "5"});
  ASSERT_EQ(top.exit_code, 0) << top.raw_stdout;
  EXPECT_NE(top.raw_stdout.find("clock_gettime\""), std::string::npos) << top.raw_stdout;
  EXPECT_EQ(top.raw_stdout.find("[unknown]"), std::string::npos) << top.raw_stdout;
  // Through the reader: the leaf of most samples is in the vDSO (its
  // clock_gettime, or where the kernel's build keeps the clock read out of
  // line, the local function it calls, which has no symbol).
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  size_t samples = 0, in_vdso = 0;
  for (const format::CpuSample& s : trace.rows<format::CpuSample>()) {
    ++samples;
    if (trace.leafUserMapping(s.pid, s.stack_id) == "[vdso]") ++in_vdso;
  }
  EXPECT_GT(in_vdso * 4, samples) << in_vdso << " of " << samples;
}

TEST(Mappings, TheWholeBoxRecordingHasNothingOfTheRecorder) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("whole_box.trace");
  // The shell prints its pid and becomes the recorder: the pid to look for.
  WorkloadRun run = run_workload(
      "/bin/sh",
      {"-c", "echo pid=$$; exec \"$0\" -o \"$1\" -a -d 3 -F 999", INCISE_RECORD_BIN, path});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  const auto recorder = static_cast<uint32_t>(run.number("pid"));
  ASSERT_NE(recorder, 0u);
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  const std::vector<format::CpuSample> samples = trace.rows<format::CpuSample>();
  EXPECT_GT(samples.size(), 0u);
  for (const format::CpuSample& s : samples) ASSERT_NE(s.pid, recorder);
  // It may be the other side of a target's switch (the target's row is
  // true), but never with a stack of its own; it wakes and is woken by
  // nothing recorded, and is never read as a process.
  for (const format::SchedSwitch& s : trace.rows<format::SchedSwitch>()) {
    if (s.prev_pid == recorder) {
      ASSERT_EQ(s.stack_id, 0u);
    }
  }
  for (const format::Wakeup& w : trace.rows<format::Wakeup>()) {
    ASSERT_FALSE(w.waker_pid == recorder && w.wakee_pid == recorder);
    if (w.waker_pid == recorder) {
      ASSERT_EQ(w.stack_id, 0u);
    }
  }
  for (const format::Process& p : trace.reader().metadata().processes) ASSERT_NE(p.pid, recorder);
  for (const format::Mapping& m : trace.reader().metadata().mappings) ASSERT_NE(m.pid, recorder);
}

}  // namespace
}  // namespace incise::testing
