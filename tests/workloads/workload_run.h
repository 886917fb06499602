// workload_run.h: runs a bundled workload (tools/workloads/) and parses its
// key=value output, for the workloads' self-tests and the recorder's
// integration tests.
//
// The workload is started with posix_spawn (no shell), its stdout captured
// and split into lines of `key=value`; stderr passes through. The result says
// how the process ended, so a test can assert on both.
//
// Example:
//   auto run = incise::testing::run_workload(INCISE_WORKLOADS_DIR "/lock_story",
//                                            {"--threads", "2", "--iterations", "100"});
//   ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
//   EXPECT_EQ(run.number("unlock_calls"), 200u);
#pragma once

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace incise::testing {

struct WorkloadRun {
  int exit_code = -1;  // exit status, 128 + signal, or -1 when it could not start
  std::string raw_stdout;
  std::map<std::string, std::string> values;

  bool has(const std::string& key) const { return values.count(key) != 0; }
  const std::string& text(const std::string& key) const {
    static const std::string missing;
    auto found = values.find(key);
    return found == values.end() ? missing : found->second;
  }
  // Decimal or 0x-hex; 0 when the key is missing (check has() where it matters).
  std::uint64_t number(const std::string& key) const {
    return std::strtoull(text(key).c_str(), nullptr, 0);
  }
  double decimal(const std::string& key) const { return std::strtod(text(key).c_str(), nullptr); }
};

inline WorkloadRun run_workload(const std::string& path, const std::vector<std::string>& args) {
  WorkloadRun run;
  int fds[2];
  if (pipe(fds) != 0) return run;
  std::vector<std::string> owned = {path};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : owned) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return run;
  }
  char buffer[4096];
  ssize_t got = 0;
  while ((got = read(fds[0], buffer, sizeof buffer)) != 0) {
    if (got > 0) run.raw_stdout.append(buffer, static_cast<std::size_t>(got));
    if (got < 0 && errno != EINTR) break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

  std::istringstream lines(run.raw_stdout);
  std::string line;
  while (std::getline(lines, line)) {
    if (auto eq = line.find('='); eq != std::string::npos) {
      run.values[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return run;
}

// A shell command's exit status and everything it printed (stdout and
// stderr), for checking a program's messages:
//   ShellRun run = run_shell(recorder + " --alloc -p 1");
//   EXPECT_NE(run.output.find("has not loaded"), std::string::npos);
struct ShellRun {
  int exit_code = -1;  // -1 when it could not run or did not exit
  std::string output;
};

inline ShellRun run_shell(const std::string& command) {
  ShellRun result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace incise::testing
