// Starting a program for a hardening test and stopping it on our terms:
// stdout and stderr captured to files, SIGKILL at a chosen moment, and a
// deadline so a hung recorder fails the test instead of hanging it.
//
//   ChildProcess recorder = ChildProcess::start({INCISE_RECORD_BIN, "-a", "-o", path});
//   recorder.killAfter(std::chrono::milliseconds(700));
//   std::optional<int> status = recorder.waitFor(std::chrono::seconds(20));  // nullopt: hung
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace incise::testing {

class ChildProcess {
 public:
  // Starts argv[0] (a path); pid() is -1 when it could not start.
  static ChildProcess start(const std::vector<std::string>& argv);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ~ChildProcess();  // kills and reaps a child still running

  pid_t pid() const { return pid_; }
  void signal(int signo) const;
  // Exit status (128 + signal when killed), or nullopt if still running at the deadline.
  std::optional<int> waitFor(std::chrono::milliseconds deadline);
  std::string output() const;  // stdout
  std::string errors() const;  // stderr
  // Waits until stderr holds `text` (true), the child exits or the deadline passes (false):
  // a test that needs the recorder attached waits for its "recording" line instead of a guess.
  bool waitForErrors(const std::string& text, std::chrono::milliseconds deadline);

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string stdout_path_;
  std::string stderr_path_;
};

uint64_t monotonicNowNs();

// "CapEff" of /proc/PID/status as a bit mask; nullopt if unreadable.
std::optional<uint64_t> effectiveCapabilities(pid_t pid);

}  // namespace incise::testing
