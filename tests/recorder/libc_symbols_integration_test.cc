// A program whose time goes into libc's internal functions, recorded with
// the default options: the trace names them from libc's debug file
// (libc6-dbg), as perf does, and as any analyzer reads them from the trace
// alone. Skips with the reason when libc6-dbg is not installed, except
// under CI=true, where tools/setup installs it.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "base/hex.h"
#include "objfile/elf_reader.h"
#include "tests/recorder/recorder_test_support.h"
#include "tests/workloads/workload_run.h"

namespace incise::testing {
namespace {

const std::string kWorkloads = INCISE_WORKLOADS_DIR;

// libc's debug file by build-id, where libc6-dbg installs it; "" when absent.
std::string libcDebugFile() {
  for (const char* libc :
       {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"}) {
    Result<std::string> id = objfile::readBuildId(libc);
    if (!id) continue;
    const std::string hex = hexBytes(*id);
    const std::string path =
        "/usr/lib/debug/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

TEST(LibcSymbols, QsortAndMemcpyInternalsAreNamedFromLibcsDebugFile) {
  INCISE_REQUIRE_RECORDING();
  if (libcDebugFile().empty()) {
    if (runningInCi()) FAIL() << "CI=true but libc6-dbg is not installed (tools/setup installs it)";
    GTEST_SKIP() << "libc6-dbg is not installed: libc's internal functions have no names here";
  }
  const std::string path = tempTracePath("qsort_memcpy");
  WorkloadRun run = run_workload(
      INCISE_RECORD_BIN, {"-o", path, "-F", "999", "--", kWorkloads + "/qsort_memcpy", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();

  std::map<std::string, size_t> leaves;
  size_t samples = 0;
  for (const auto& sample : trace.rows<format::CpuSample>()) {
    ++samples;
    ++leaves[trace.leafUserFunction(sample.pid, sample.stack_id)];
  }
  // cpu-clock samples follow the CPU time the program got: a loaded box gives it less.
  ASSERT_GE(samples, 100u) << "too few samples to compare shares";
  size_t sort = 0, copy = 0;
  for (const auto& [name, count] : leaves) {
    if (name.rfind("msort_with_tmp", 0) == 0) sort += count;
    if (name.rfind("__memmove_", 0) == 0 || name.rfind("__memcpy_", 0) == 0) copy += count;
  }
  std::string seen;
  for (const auto& [name, count] : leaves) seen += name + "=" + std::to_string(count) + " ";
  // Both halves of the work are a large share of the samples (the workload
  // splits its time between them); before, neither had a name.
  EXPECT_GT(sort * 10, samples) << seen;
  EXPECT_GT(copy * 10, samples) << seen;
}

}  // namespace
}  // namespace incise::testing
