// A program a test runs and looks at while it sleeps: it prints one line of
// numbers, its pid first, then waits to be killed, which happens when the
// test's RunningProgram goes.
//
//   RunningProgram running(program + " arg");
//   ASSERT_GE(running.numbers().size(), 3u);   // pid, then what it printed
//   locateTlsVariable(running.pid(), ...);
#pragma once

#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace incise::testing {

class RunningProgram {
 public:
  explicit RunningProgram(const std::string& command)
      : pipe_(popen(("exec " + command).c_str(), "r"), pclose) {
    char line[512] = {};
    if (pipe_ && fgets(line, sizeof line, pipe_.get()) != nullptr) {
      std::istringstream fields(line);
      uint64_t number = 0;
      while (fields >> number) numbers_.push_back(number);
    }
  }
  ~RunningProgram() {
    if (pid() > 0) kill(static_cast<pid_t>(pid()), SIGKILL);
  }
  RunningProgram(const RunningProgram&) = delete;
  RunningProgram& operator=(const RunningProgram&) = delete;

  // 0 when the program printed nothing.
  uint32_t pid() const { return numbers_.empty() ? 0 : static_cast<uint32_t>(numbers_[0]); }
  // The numbers of its line, in order (the pid first); 0 past the end.
  uint64_t number(size_t index) const { return index < numbers_.size() ? numbers_[index] : 0; }
  const std::vector<uint64_t>& numbers() const { return numbers_; }

 private:
  std::unique_ptr<FILE, int (*)(FILE*)> pipe_;
  std::vector<uint64_t> numbers_;
};

}  // namespace incise::testing
