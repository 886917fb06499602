// libincise-preload.so in real programs, without a recorder: alloc_story
// (malloc, calloc, operator new, frees, and malloc from a signal handler)
// gives its own answers with every allocation sampled and remembered, and
// through a shell that forks and execs it; a bad sampling mean is named on
// stderr and the program still runs.
#include <gtest/gtest.h>

#include <string>

#include "tests/workloads/workload_run.h"

namespace incise::testing {
namespace {

const std::string kAllocStory = std::string(INCISE_WORKLOADS_DIR) + "/alloc_story";

std::string preloaded(const std::string& sample_bytes, const std::string& command) {
  return "env LD_PRELOAD=" + std::string(INCISE_PRELOAD_LIBRARY) +
         " INCISE_ALLOC_SAMPLE_BYTES=" + sample_bytes + " " + command;
}

TEST(PreloadLibrary, EveryAllocationSampledLeavesTheProgramsAnswersAlone) {
  // A mean of 1 byte samples every allocation: the table holds each live
  // block and the markers run for each allocation and free.
  ShellRun run = run_shell(preloaded("1", kAllocStory + " --small-count 200000 --leak-count 2000"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("count.make_small_records=200000\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("count.allocate_in_handler=8192\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("leaked_bytes=8192000\n"), std::string::npos) << run.output;
}

TEST(PreloadLibrary, AForkingAndExecingShellRunsItsChildrenUnderIt) {
  ShellRun run =
      run_shell(preloaded("4096", "sh -c '" + kAllocStory + " --scale 1 | grep leaked; " +
                                      kAllocStory + " --leak-count 10 | grep leaked & wait'"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("leaked_bytes=33554432\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("leaked_bytes=40960\n"), std::string::npos) << run.output;
}

TEST(PreloadLibrary, ABadMeanIsNamedAndTheProgramStillRuns) {
  ShellRun run = run_shell(preloaded("lots", kAllocStory + " --scale 1"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("INCISE_ALLOC_SAMPLE_BYTES is not a number of bytes"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("leaked_bytes=33554432\n"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace incise::testing
