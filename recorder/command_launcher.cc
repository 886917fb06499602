#include "recorder/command_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace incise::recorder {
namespace {

std::string_view nameOf(std::string_view variable) {
  return variable.substr(0, variable.find('='));
}

// The recorder's environment with `environment`'s changes: built before
// fork, as the child may only make async-signal-safe calls.
std::vector<std::string> commandEnvironment(const LaunchEnvironment& environment) {
  std::vector<std::string> variables = environment.variables;
  std::string preload;
  for (const std::string& library : environment.preload_libraries)
    preload += (preload.empty() ? "" : ":") + library;
  for (char** entry = environ; *entry; ++entry) {
    std::string_view variable(*entry);
    std::string_view name = nameOf(variable);
    if (name == "LD_PRELOAD" && !preload.empty()) {
      std::string_view theirs = variable.substr(name.size() + 1);
      if (!theirs.empty()) preload += ":" + std::string(theirs);
      continue;
    }
    bool replaced = false;
    for (const std::string& ours : environment.variables) replaced |= nameOf(ours) == name;
    if (!replaced) variables.emplace_back(variable);
  }
  if (!preload.empty()) variables.push_back("LD_PRELOAD=" + preload);
  return variables;
}

}  // namespace

Result<CommandLauncher> CommandLauncher::fork(const std::vector<std::string>& command,
                                              const LaunchEnvironment& environment) {
  if (command.empty()) return Error("no command to run");
  int go[2];
  int error[2];
  if (pipe2(go, O_CLOEXEC) != 0) return Error::fromErrno(errno, "pipe");
  UniqueFd go_read(go[0]), go_write(go[1]);
  if (pipe2(error, O_CLOEXEC) != 0) return Error::fromErrno(errno, "pipe");
  UniqueFd error_read(error[0]), error_write(error[1]);
  std::vector<char*> argv;
  for (const auto& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> variables = commandEnvironment(environment);
  std::vector<char*> envp;
  for (auto& variable : variables) envp.push_back(variable.data());
  envp.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) return Error::fromErrno(errno, "fork");
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on (and no destructors:
    // it leaves by exec or _exit).
    close(go_write.get());
    close(error_read.get());
    char byte;
    ssize_t n;
    do {
      n = read(go_read.get(), &byte, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(127);  // the recorder gave up before releasing us
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    // Ambient capabilities survive execve into an unprivileged program: the
    // command would run with whatever the recorder was granted (CAP_BPF,
    // CAP_PERFMON, CAP_SYS_ADMIN from a systemd unit's AmbientCapabilities).
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
      int err = errno;
      (void)!write(error_write.get(), &err, sizeof(err));
      _exit(127);
    }
    for (int fd : environment.inherited_fds) {
      if (fcntl(fd, F_SETFD, 0) != 0) {
        int err = errno;
        (void)!write(error_write.get(), &err, sizeof(err));
        _exit(127);
      }
    }
    execvpe(argv[0], argv.data(), envp.data());
    int err = errno;
    (void)!write(error_write.get(), &err, sizeof(err));
    _exit(127);
  }
  return CommandLauncher(pid, std::move(go_write), std::move(error_read), command[0]);
}

CommandLauncher::CommandLauncher(CommandLauncher&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      go_fd_(std::move(other.go_fd_)),
      error_fd_(std::move(other.error_fd_)),
      program_(std::move(other.program_)),
      exit_status_(other.exit_status_),
      exec_error_(std::move(other.exec_error_)) {}

CommandLauncher::~CommandLauncher() {
  if (go_fd_) abandon();
}

Status CommandLauncher::release() {
  char go = 1;
  ssize_t n = write(go_fd_.get(), &go, 1);
  int err = errno;
  go_fd_.reset();
  if (n != 1) return Error::fromErrno(err, "cannot start the command");
  return Status::ok();
}

Status CommandLauncher::waitUntilRunning(int timeout_ms) {
  if (!error_fd_) return exec_error_.empty() ? Status::ok() : Status(Error(exec_error_));
  // The error pipe is close-on-exec: EOF once the command runs, an errno if exec failed.
  pollfd p{error_fd_.get(), POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, timeout_ms);
  } while (ready < 0 && errno == EINTR);
  if (ready <= 0) return Status::ok();  // still starting: a failure shows at pollExit
  readExecError();
  if (!exec_error_.empty()) return Error(exec_error_);
  return Status::ok();
}

void CommandLauncher::abandon() {
  go_fd_.reset();  // the child reads EOF and exits 127
  if (pid_ > 0 && !exit_status_) {
    int status = 0;
    waitpid(pid_, &status, 0);
    exit_status_ = 127;
  }
}

void CommandLauncher::readExecError() {
  if (!error_fd_) return;
  int err = 0;
  ssize_t n;
  do {
    n = read(error_fd_.get(), &err, sizeof(err));
  } while (n < 0 && errno == EINTR);
  if (n == sizeof(err)) exec_error_ = "cannot run " + program_ + ": " + std::strerror(err);
  error_fd_.reset();
}

std::optional<int> CommandLauncher::pollExit() {
  if (exit_status_ || pid_ <= 0) return exit_status_;
  int status = 0;
  pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done != pid_) return std::nullopt;
  readExecError();
  exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return exit_status_;
}

}  // namespace incise::recorder
