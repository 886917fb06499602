// preload_child: lock calls in the shapes that try libincise-preload.so's
// edges, each printing its own truth (stdout, key=value):
//   --spin N --threads T        T threads take one pthread spin lock N times each:
//                               spin_address, spin_sections
//   --fork-exec N PROGRAM ARGS  takes a mutex N times, then forks a child that takes
//                               it N times and execs PROGRAM ARGS (another binary):
//                               parent_pid, child_pid, fork_mutex_address,
//                               parent_sections, child_sections, child_exit_status
//   --hostile N PROGRAM ARGS    closes every descriptor past stderr, opens others
//                               under their numbers and clears its environment,
//                               takes a mutex N times, then execs PROGRAM ARGS with
//                               the environment it started with: hostile_pid,
//                               hostile_mutex_address, hostile_sections
//   --mutex N                   takes a mutex N times: plain_pid,
//                               plain_mutex_address, plain_sections
//   --signals N                 takes a mutex N times while a 20 kHz timer's handler
//                               takes another one: signal_pid, signal_mutex_address,
//                               handler_mutex_address, signal_sections, handler_sections
//   --forge-pid PID N           takes a mutex once, then writes PID into its thread's
//                               ring header in the recorder's shared memory (as a
//                               hostile program could) and takes it N times more:
//                               forger_pid, forged_pid, forge_mutex_address,
//                               ring_found, forged_sections
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "preload/ring_layout.h"

namespace {

pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_spinlock_t g_spin;
volatile unsigned long g_counter = 0;

unsigned long takeMutex(unsigned long times) {
  for (unsigned long i = 0; i < times; ++i) {
    pthread_mutex_lock(&g_mutex);
    g_counter = g_counter + 1;
    pthread_mutex_unlock(&g_mutex);
  }
  return times;
}

int spin(unsigned long times, unsigned long threads) {
  pthread_spin_init(&g_spin, PTHREAD_PROCESS_PRIVATE);
  std::vector<std::thread> workers;
  for (unsigned long t = 0; t < threads; ++t) {
    workers.emplace_back([times] {
      for (unsigned long i = 0; i < times; ++i) {
        pthread_spin_lock(&g_spin);
        g_counter = g_counter + 1;
        pthread_spin_unlock(&g_spin);
      }
    });
  }
  for (auto& worker : workers) worker.join();
  std::printf("spin_address=%p\nspin_sections=%lu\n",
              reinterpret_cast<void*>(const_cast<int*>(&g_spin)), times * threads);
  return 0;
}

pthread_mutex_t g_handler_mutex = PTHREAD_MUTEX_INITIALIZER;
volatile sig_atomic_t g_handler_sections = 0;

void onTimer(int) {
  pthread_mutex_lock(&g_handler_mutex);
  g_handler_sections = g_handler_sections + 1;
  pthread_mutex_unlock(&g_handler_mutex);
}

int signals(unsigned long times) {
  struct sigaction action {};
  action.sa_handler = onTimer;
  sigaction(SIGALRM, &action, nullptr);
  itimerval every{.it_interval = {0, 50}, .it_value = {0, 50}};
  setitimer(ITIMER_REAL, &every, nullptr);
  // About 1 us between sections, so that the timer fires inside and outside them.
  unsigned long sections = 0;
  for (; sections < times; ++sections) {
    takeMutex(1);
    for (int step = 0; step < 1000; ++step) g_counter = g_counter + 1;
  }
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  std::printf(
      "signal_pid=%d\nsignal_mutex_address=%p\nhandler_mutex_address=%p\nsignal_sections=%lu\n"
      "handler_sections=%d\n",
      getpid(), static_cast<void*>(&g_mutex), static_cast<void*>(&g_handler_mutex), sections,
      static_cast<int>(g_handler_sections));
  return 0;
}

int forkExec(unsigned long times, char** program) {
  unsigned long parent_sections = takeMutex(times);
  std::printf("parent_pid=%d\nfork_mutex_address=%p\nparent_sections=%lu\n", getpid(),
              static_cast<void*>(&g_mutex), parent_sections);
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    std::printf("child_sections=%lu\n", takeMutex(times));
    std::fflush(stdout);
    execv(program[0], program);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("child_pid=%d\nchild_exit_status=%d\n", child,
              WIFEXITED(status) ? WEXITSTATUS(status) : 128);
  return 0;
}

// The environment is kept aside and given back to PROGRAM, so it loads the
// library again; the descriptor the environment names is by then another
// file (/dev/null took the freed numbers).
int hostile(unsigned long times, char** program) {
  std::vector<std::string> kept;
  for (char** variable = environ; *variable; ++variable) kept.emplace_back(*variable);
  close_range(3, ~0u, 0);
  clearenv();
  for (int i = 0; i < 16; ++i) open("/dev/null", O_RDONLY);
  std::printf("hostile_pid=%d\nhostile_mutex_address=%p\nhostile_sections=%lu\n", getpid(),
              static_cast<void*>(&g_mutex), takeMutex(times));
  std::fflush(stdout);
  std::vector<char*> environment;
  for (std::string& variable : kept) environment.push_back(variable.data());
  environment.push_back(nullptr);
  execve(program[0], program, environment.data());
  return 127;
}

// The calling thread's ring in the area INCISE_PRELOAD_RINGS names ("FD:TOKEN").
incise::preload::RingHeader* ownRing() {
  const char* variable = std::getenv(incise::preload::kRingsVariable);
  if (variable == nullptr) return nullptr;
  const int fd = std::atoi(variable);
  struct stat st {};
  if (fstat(fd, &st) != 0) return nullptr;
  void* mapped = mmap(nullptr, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) return nullptr;
  auto* area = static_cast<incise::preload::AreaHeader*>(mapped);
  for (uint32_t i = 0; i < area->ring_count; ++i) {
    incise::preload::ThreadRing* ring = incise::preload::ringAt(area, i);
    if (ring->header.tid == static_cast<uint32_t>(gettid()) &&
        ring->header.state.load() == static_cast<uint32_t>(incise::preload::RingState::kOwned))
      return &ring->header;
  }
  return nullptr;
}

int forgePid(unsigned long pid, unsigned long times) {
  takeMutex(1);  // claims the thread's ring
  incise::preload::RingHeader* ring = ownRing();
  if (ring != nullptr) ring->pid = static_cast<uint32_t>(pid);
  std::printf(
      "forger_pid=%d\nforged_pid=%lu\nforge_mutex_address=%p\nring_found=%d\n"
      "forged_sections=%lu\n",
      getpid(), pid, static_cast<void*>(&g_mutex), ring != nullptr ? 1 : 0, takeMutex(times));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--mutex") == 0) {
    unsigned long times = std::strtoul(argv[2], nullptr, 10);
    std::printf("plain_pid=%d\nplain_mutex_address=%p\nplain_sections=%lu\n", getpid(),
                static_cast<void*>(&g_mutex), takeMutex(times));
    return 0;
  }
  if (argc >= 3 && std::strcmp(argv[1], "--signals") == 0)
    return signals(std::strtoul(argv[2], nullptr, 10));
  if (argc >= 5 && std::strcmp(argv[1], "--spin") == 0 && std::strcmp(argv[3], "--threads") == 0)
    return spin(std::strtoul(argv[2], nullptr, 10), std::strtoul(argv[4], nullptr, 10));
  if (argc >= 4 && std::strcmp(argv[1], "--fork-exec") == 0)
    return forkExec(std::strtoul(argv[2], nullptr, 10), argv + 3);
  if (argc >= 4 && std::strcmp(argv[1], "--hostile") == 0)
    return hostile(std::strtoul(argv[2], nullptr, 10), argv + 3);
  if (argc >= 4 && std::strcmp(argv[1], "--forge-pid") == 0)
    return forgePid(std::strtoul(argv[2], nullptr, 10), std::strtoul(argv[3], nullptr, 10));
  std::fprintf(stderr,
               "usage: preload_child --spin N --threads T | --fork-exec N PROGRAM ARGS... | "
               "--hostile N PROGRAM ARGS... | --mutex N | --signals N | --forge-pid PID N\n");
  return 2;
}
