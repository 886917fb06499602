#include "tests/hardening/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

extern char** environ;

namespace incise::testing {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int statusCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

uint64_t monotonicNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

ChildProcess ChildProcess::start(const std::vector<std::string>& argv_strings) {
  static int counter = 0;
  ChildProcess child;
  std::string base =
      (std::filesystem::temp_directory_path() /
       ("incise-hardening-" + std::to_string(getpid()) + "-" + std::to_string(counter++)))
          .string();
  child.stdout_path_ = base + ".out";
  child.stderr_path_ = base + ".err";
  std::vector<char*> argv;
  for (const auto& a : argv_strings) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, child.stdout_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, child.stderr_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  child.pid_ = pid;
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_),
      reaped_(other.reaped_),
      stdout_path_(std::move(other.stdout_path_)),
      stderr_path_(std::move(other.stderr_path_)) {
  other.pid_ = -1;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (!stdout_path_.empty()) {
    std::filesystem::remove(stdout_path_);
    std::filesystem::remove(stderr_path_);
  }
}

void ChildProcess::signal(int signo) const {
  if (pid_ > 0 && !reaped_) kill(pid_, signo);
}

std::optional<int> ChildProcess::waitFor(std::chrono::milliseconds deadline) {
  if (pid_ <= 0) return -1;
  auto until = std::chrono::steady_clock::now() + deadline;
  while (true) {
    int status = 0;
    pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      reaped_ = true;
      return statusCode(status);
    }
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string ChildProcess::output() const {
  return slurp(stdout_path_);
}
std::string ChildProcess::errors() const {
  return slurp(stderr_path_);
}

bool ChildProcess::waitForErrors(const std::string& text, std::chrono::milliseconds deadline) {
  auto give_up = std::chrono::steady_clock::now() + deadline;
  while (errors().find(text) == std::string::npos) {
    if (pid_ <= 0 || reaped_ || std::chrono::steady_clock::now() >= give_up) return false;
    siginfo_t info{};
    // WNOWAIT: an exited child stays waitable, so waitFor still gets its status.
    if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid_) {
      return errors().find(text) != std::string::npos;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::optional<uint64_t> effectiveCapabilities(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
  }
  return std::nullopt;
}

}  // namespace incise::testing
