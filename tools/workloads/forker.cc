// forker: a process tree with known CPU time per function, for checking that
// a recording of `-- CMD` follows children (fork, optionally exec) and their
// threads from start to exit.
//
// The parent forks a child and burns --burn-ms of CPU in parent_burn. The
// child (optionally after re-executing this binary, with --exec) starts a
// thread that burns --burn-ms in child_thread_burn while its main thread burns
// --burn-ms in child_burn; then both exit. The child reports its ids and
// measured CPU times to the parent through a pipe; the parent prints
// everything once the child has exited. Burn times are measured with
// CLOCK_THREAD_CPUTIME_ID.
//
// Output (stdout, key=value): parent_pid, child_pid, child_thread_tid,
// child_execed (0/1), child_exit_status, cpu_ns.parent_burn,
// cpu_ns.child_burn, cpu_ns.child_thread_burn, elapsed_ns.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "tools/workloads/cpu_work.h"
#include "tools/workloads/options.h"
#include "tools/workloads/report.h"

namespace incise::workloads {

// Each returns the CPU nanoseconds it burnt.
INCISE_WORKLOAD_FUNCTION std::uint64_t parent_burn(std::uint64_t cpu_ns) {
  const std::uint64_t start = thread_cpu_ns();
  keep_value(burn_thread_cpu(cpu_ns, 0x1234));
  return thread_cpu_ns() - start;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t child_burn(std::uint64_t cpu_ns) {
  const std::uint64_t start = thread_cpu_ns();
  keep_value(burn_thread_cpu(cpu_ns, 0x5678));
  return thread_cpu_ns() - start;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t child_thread_burn(std::uint64_t cpu_ns) {
  const std::uint64_t start = thread_cpu_ns();
  keep_value(burn_thread_cpu(cpu_ns, 0x9abc));
  return thread_cpu_ns() - start;
}

namespace {

// The child's part; writes its key=value lines to report_fd and returns the
// exit status.
int run_child(std::uint64_t burn_ns, int report_fd, bool execed) {
  std::uint64_t thread_tid = 0;
  std::uint64_t thread_ns = 0;
  std::thread burner([&] {
    thread_tid = current_tid();
    thread_ns = child_thread_burn(burn_ns);
  });
  const std::uint64_t main_ns = child_burn(burn_ns);
  burner.join();
  const std::string lines =
      "child_pid=" + std::to_string(getpid()) + "\nchild_thread_tid=" + std::to_string(thread_tid) +
      "\nchild_execed=" + (execed ? "1" : "0") + "\ncpu_ns.child_burn=" + std::to_string(main_ns) +
      "\ncpu_ns.child_thread_burn=" + std::to_string(thread_ns) + "\n";
  return write(report_fd, lines.data(), lines.size()) == static_cast<ssize_t>(lines.size()) ? 0 : 1;
}

int run(int argc, char** argv) {
  std::uint64_t burn_ms = 500;
  bool exec_child = false;
  std::string role;
  std::string report_fd_text;
  Options options("forker",
                  "Forks a child (which starts a thread); parent, child and thread each burn\n"
                  "--burn-ms of CPU in a named function and exit. Prints ids and CPU times.",
                  "forker --burn-ms 500 --exec");
  options.add("burn-ms", "CPU milliseconds each of the three burns", burn_ms);
  options.add_flag("exec", "the child re-executes this binary before burning", exec_child);
  options.add_hidden("role", role);
  options.add_hidden("report-fd", report_fd_text);
  options.parse_or_exit(argc, argv);
  const std::uint64_t burn_ns = burn_ms * 1'000'000;

  if (role == "child") return run_child(burn_ns, std::stoi(report_fd_text), true);

  int fds[2];
  if (pipe(fds) != 0) {
    std::fprintf(stderr, "forker: pipe failed: %s\n", std::strerror(errno));
    return 1;
  }
  std::fflush(stdout);
  const std::uint64_t start_ns = monotonic_ns();
  const pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "forker: fork failed: %s\n", std::strerror(errno));
    return 1;
  }
  if (child == 0) {
    close(fds[0]);
    if (exec_child) {
      const std::string burn_text = std::to_string(burn_ms);
      const std::string fd_text = std::to_string(fds[1]);
      execl("/proc/self/exe", "forker", "--role", "child", "--burn-ms", burn_text.c_str(),
            "--report-fd", fd_text.c_str(), static_cast<char*>(nullptr));
      std::fprintf(stderr, "forker: exec of /proc/self/exe failed: %s\n", std::strerror(errno));
      _exit(127);
    }
    _exit(run_child(burn_ns, fds[1], false));
  }
  close(fds[1]);
  const std::uint64_t parent_ns = parent_burn(burn_ns);

  std::string child_lines;
  char buffer[512];
  ssize_t got = 0;
  while ((got = read(fds[0], buffer, sizeof buffer)) > 0 || (got < 0 && errno == EINTR)) {
    if (got > 0) child_lines.append(buffer, static_cast<std::size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const std::uint64_t elapsed_ns = monotonic_ns() - start_ns;

  report("parent_pid", static_cast<std::uint64_t>(getpid()));
  std::fputs(child_lines.c_str(), stdout);
  report(
      "child_exit_status",
      static_cast<std::uint64_t>(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)));
  report("cpu_ns.parent_burn", parent_ns);
  report("elapsed_ns", elapsed_ns);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

}  // namespace
}  // namespace incise::workloads

int main(int argc, char** argv) {
  return incise::workloads::run(argc, argv);
}
