// incise-record's command line: every bad input is named and exits 2; an
// unwritable output is rejected before anything is attached.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/recorder/recorder_test_support.h"
#include "tests/workloads/workload_run.h"

namespace incise::testing {
namespace {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CommandResult runRecorder(const std::string& args) {
  CommandResult result;
  std::string command = std::string(INCISE_RECORD_BIN) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.output.append(buffer.data(), n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

uint32_t unusedPid() {
  uint32_t pid_max = 4194304;
  std::ifstream("/proc/sys/kernel/pid_max") >> pid_max;
  for (uint32_t pid = pid_max - 1; pid > 1; --pid)
    if (!std::filesystem::exists("/proc/" + std::to_string(pid))) return pid;
  return 0;
}

TEST(RecorderCli, HelpTeachesCostsPrivilegesAndExamples) {
  CommandResult run = runRecorder("--help");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.output.find("CAP_BPF"), std::string::npos);
  EXPECT_NE(run.output.find("Examples:"), std::string::npos);
  EXPECT_NE(run.output.find("--lock-probe"), std::string::npos);
}

TEST(RecorderCli, BadPidIsNamed) {
  uint32_t pid = unusedPid();
  ASSERT_NE(pid, 0u);
  CommandResult run = runRecorder("-p " + std::to_string(pid) + " -o /dev/null");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("no such process: " + std::to_string(pid)), std::string::npos)
      << run.output;
}

TEST(RecorderCli, BadValuesAreNamedAndExit2) {
  struct Case {
    std::string args, expected;
  } cases[] = {
      {"-a -F 0", "--freq '0': expected a whole number from 1 to"},
      {"-a --locks sometimes", "--locks sometimes"},
      {"-p 1 -a", "choose one target"},
      {"", "nothing to record"},
      {"-a --lock-probe justabinary", "--lock-probe justabinary"},
      {"-a -d -1", "-d"},
      {"-p 12x", "-p '12x': expected a whole number from 1 to 4194304 (a process id)"},
      {"--cgroup /no/such/cgroup", "--cgroup /no/such/cgroup"},
      {"--cgroup /tmp", "--cgroup /tmp: not a cgroup v2 directory"},
      {"-a --bogus", "bogus"},
  };
  for (const Case& c : cases) {
    CommandResult run = runRecorder(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.output;
    EXPECT_NE(run.output.find(c.expected), std::string::npos) << c.args << "\n" << run.output;
  }
}

TEST(RecorderCli, UnwritableOutputIsRejectedBeforeAttaching) {
  INCISE_REQUIRE_RECORDING();
  CommandResult run = runRecorder("-a -d 1 -o /nonexistent-dir/x.trace");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("cannot write /nonexistent-dir/x.trace: No such file or directory"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("attached"), std::string::npos);
}

TEST(RecorderCli, ExecFailureIsReported) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("exec-fail.trace");
  CommandResult run = runRecorder("-o " + path + " -- /no/such/program");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("cannot run /no/such/program: No such file or directory"),
            std::string::npos)
      << run.output;
}

}  // namespace
}  // namespace incise::testing
