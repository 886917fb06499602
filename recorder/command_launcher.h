// CommandLauncher: starts `-- CMD ARGS...` stopped at the door. The child is
// forked at once but waits on a pipe until the recorder has attached every
// program and put the child's pid in `targets`; only then does it exec, so
// the trace covers the command from its first instruction. It runs without
// the recorder's ambient capabilities. Its environment is the recorder's,
// with a LaunchEnvironment's libraries put first in LD_PRELOAD, its
// variables set, and its descriptors left open across exec.
//
//   auto child = CommandLauncher::fork(config.command, environment);   // child blocks
//   filter.addPid(child->pid());  ... attach ...
//   child->release();                                     // child execs
//   if (Status s = child->waitUntilRunning(5000); !s) ...  // "cannot run ./x: ..."
//   std::optional<int> status = child->pollExit();        // in the main loop
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace incise::recorder {

struct LaunchEnvironment {
  std::vector<std::string> preload_libraries;  // paths, before any LD_PRELOAD the recorder has
  std::vector<std::string> variables;          // NAME=VALUE, replacing the recorder's NAME
  std::vector<int> inherited_fds;              // kept open across exec
};

class CommandLauncher {
 public:
  static Result<CommandLauncher> fork(const std::vector<std::string>& command,
                                      const LaunchEnvironment& environment = {});
  CommandLauncher(CommandLauncher&& other) noexcept;
  CommandLauncher& operator=(CommandLauncher&&) = delete;
  ~CommandLauncher();

  pid_t pid() const { return pid_; }
  // Lets the child exec. An exec failure is reported by the next pollExit.
  Status release();
  // After release(): waits up to `timeout_ms` for the exec. An Error when it
  // failed ("cannot run ./x: No such file or directory"); ok once the
  // command runs, or if it has not got that far yet.
  Status waitUntilRunning(int timeout_ms);
  // Kills a child that was never released (setup failed).
  void abandon();
  // The shell-style exit status once the command has exited (128+N for a
  // signal); nullopt while it runs.
  std::optional<int> pollExit();
  // An exec failure message from the child ("cannot run ./x: No such file").
  const std::string& execError() const { return exec_error_; }

 private:
  CommandLauncher(pid_t pid, UniqueFd go_fd, UniqueFd error_fd, std::string program)
      : pid_(pid),
        go_fd_(std::move(go_fd)),
        error_fd_(std::move(error_fd)),
        program_(std::move(program)) {}
  void readExecError();

  pid_t pid_ = -1;
  UniqueFd go_fd_;  // write end: writing a byte releases the child, closing it unreleased ends it
  UniqueFd error_fd_;  // read end: the child writes errno here if exec fails (CLOEXEC)
  std::string program_;
  std::optional<int> exit_status_;
  std::string exec_error_;
};

}  // namespace incise::recorder
