// Runs incise-record on a bundled workload for the lock and page-fault
// integration tests, and parses the workload's key=value output. The
// privilege gate and the trace view come from recorder_test_support.h.
//
//   INCISE_REQUIRE_RECORDING();
//   Recording run = record({"--locks", "all"}, {kLockStory, "--threads", "4"});
//   ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
//   uint64_t n = run.value("critical_sections");
//   TraceView trace(run.trace_path);
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/recorder/recorder_test_support.h"

namespace incise::testing {

struct Recording {
  int exit_code = -1;
  std::string trace_path;
  std::string workload_stdout;  // the recorded command's key=value lines
  std::string recorder_stderr;
  std::map<std::string, std::string> values;

  bool has(const std::string& key) const { return values.count(key) != 0; }
  uint64_t value(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? 0 : std::stoull(it->second, nullptr, 0);
  }
  std::vector<uint64_t> list(const std::string& key) const {
    std::vector<uint64_t> out;
    auto it = values.find(key);
    if (it == values.end()) return out;
    std::stringstream items(it->second);
    std::string item;
    while (std::getline(items, item, ',')) out.push_back(std::stoull(item, nullptr, 0));
    return out;
  }
  // Fills `values` from workload_stdout's key=value lines.
  void parseValues() {
    std::stringstream lines(workload_stdout);
    std::string key_value;
    while (std::getline(lines, key_value)) {
      size_t eq = key_value.find('=');
      if (eq != std::string::npos) values[key_value.substr(0, eq)] = key_value.substr(eq + 1);
    }
  }
};

// Removes a trace when the test ends.
struct RemoveOnExit {
  std::string path;
  ~RemoveOnExit() { std::filesystem::remove(path); }
};

inline std::string shellQuote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

inline std::string readAndRemove(const std::string& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::filesystem::remove(path);
  return text.str();
}

// Runs `incise-record ARGS...` and waits for it: its exit code, its
// standard output (a recorded command's) and its standard error.
inline Recording runRecorder(const std::vector<std::string>& args) {
  static int counter = 0;
  std::string base = tempTracePath("recorder_" + std::to_string(++counter));
  std::string line = shellQuote(INCISE_RECORD_BIN);
  for (const auto& word : args) line += " " + shellQuote(word);
  line += " >" + shellQuote(base + ".out") + " 2>" + shellQuote(base + ".err");
  int status = std::system(line.c_str());
  Recording run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.workload_stdout = readAndRemove(base + ".out");
  run.recorder_stderr = readAndRemove(base + ".err");
  return run;
}

// Runs `incise-record OPTIONS -o TMP -- COMMAND...` and waits for it.
inline Recording record(const std::vector<std::string>& options,
                        const std::vector<std::string>& command) {
  static int counter = 0;
  std::string trace_path = tempTracePath("locks_" + std::to_string(++counter)) + ".trace";
  std::vector<std::string> args = options;
  args.insert(args.end(), {"-o", trace_path, "--"});
  args.insert(args.end(), command.begin(), command.end());
  Recording run = runRecorder(args);
  run.trace_path = trace_path;
  run.parseValues();
  return run;
}

// Starts `words` with descriptor `fd` written to the file `path`: its pid,
// or -1 when it could not start.
inline pid_t spawnWithOutputTo(const std::vector<std::string>& words, int fd,
                               const std::string& path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, fd, path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> argv;
  for (const std::string& word : words) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  pid_t child = -1;
  int spawned = posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return spawned == 0 ? child : -1;
}

// Starts `incise-record OPTIONS -o TMP` (-a or --cgroup) in the background,
// waits for its recording line, then runs COMMAND to its end and stops the
// recorder (SIGINT): a program that starts after the recording began.
inline Recording recordThenRun(const std::vector<std::string>& options,
                               const std::vector<std::string>& command) {
  Recording run;
  run.trace_path = incise::testing::tempTracePath("started_later") + ".trace";
  const std::string out = run.trace_path + ".out";
  const std::string err = run.trace_path + ".err";
  // -d bounds the recording should the stop below never come.
  std::vector<std::string> recorder_args = {INCISE_RECORD_BIN};
  recorder_args.insert(recorder_args.end(), options.begin(), options.end());
  recorder_args.insert(recorder_args.end(), {"-d", "60", "-o", run.trace_path});
  pid_t recorder = spawnWithOutputTo(recorder_args, STDERR_FILENO, err);
  if (recorder < 0) return run;
  auto recorderStderr = [&err] {
    std::stringstream text;
    text << std::ifstream(err).rdbuf();
    return text.str();
  };
  for (int i = 0;
       i < 3000 && recorderStderr().find("incise-record: recording ") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  pid_t workload = spawnWithOutputTo(command, STDOUT_FILENO, out);
  int status = 0;
  if (workload > 0) waitpid(workload, &status, 0);
  kill(recorder, SIGINT);
  int recorder_status = 0;
  waitpid(recorder, &recorder_status, 0);
  run.exit_code = workload < 0                        ? 127
                  : !WIFEXITED(recorder_status)       ? 128
                  : WEXITSTATUS(recorder_status) != 0 ? WEXITSTATUS(recorder_status)
                  : WIFEXITED(status)                 ? WEXITSTATUS(status)
                                                      : 128;
  run.recorder_stderr = readAndRemove(err);
  run.workload_stdout = readAndRemove(out);
  run.parseValues();
  return run;
}

}  // namespace incise::testing
