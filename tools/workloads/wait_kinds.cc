// wait_kinds: a program that waits in every way a C program waits on a
// futex, one way at a time, and prints who held or posted what, so a
// recorder's wait kinds and holders can be checked against the truth.
//
// Scenarios, each --rounds times, each wait lasting about --hold-us:
//   mutex            the holder locks a pthread mutex and sleeps; the waiter
//                    blocks in pthread_mutex_lock until the holder unlocks.
//   rwlock           the writer holds a pthread rwlock and sleeps; a reader
//                    (pthread_rwlock_rdlock) and a second writer
//                    (pthread_rwlock_wrlock) block until it unlocks.
//   condvar          the waiter blocks in pthread_cond_wait; the signaller
//                    sleeps, sets the predicate and signals (after unlocking
//                    the mutex, so the waiter re-takes it uncontended).
//   semaphore        the waiter blocks in sem_wait; the poster sleeps, then
//                    sem_post (both threads of this process).
//   shared_semaphore the waiter blocks in sem_wait on a process-shared
//                    semaphore in shared memory; a child process sleeps,
//                    then posts (PostgreSQL's way of waking a backend).
//   join             the main thread joins a thread that sleeps, then exits.
// Threads wait for each other's turn by polling with nanosleep, never on a
// futex, so the only futex waits are the scenarios' own (and the joins of
// each scenario's threads at its end).
//
// Output (stdout, key=value), per scenario S: S_address (the object: mutex,
// rwlock, condvar, sem_t; join: the joined thread's pthread_t), S_holder_tid
// (who held it, or signalled, posted, or was joined), S_waiter_tid (the
// rwlock also rwlock_writer_waiter_tid), S_rounds, S_hold_ns (the holder's
// measured hold or delay before posting, summed), S_wait_ns (the waiter's
// measured wait, summed); shared_semaphore_holder_pid; pid; hold_us.
//
//   wait_kinds --rounds 5 --hold-us 20000
#include <pthread.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
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
namespace {

struct Config {
  std::uint64_t rounds = 5;
  std::uint64_t hold_us = 20000;
};

// Who did what in one scenario, summed over its rounds.
struct Truth {
  std::uint64_t holder_tid = 0;
  std::uint64_t waiter_tid = 0;
  std::uint64_t hold_ns = 0;
  std::uint64_t wait_ns = 0;
};

// A turn-taking flag polled with short sleeps: never a futex.
class Turn {
 public:
  void set(std::uint64_t value) { value_.store(value, std::memory_order_release); }
  void await(std::uint64_t value) const {
    while (value_.load(std::memory_order_acquire) != value) sleep_ns(50'000);
  }

 private:
  std::atomic<std::uint64_t> value_{0};
};

void report_truth(const std::string& name, const void* address, const Truth& truth,
                  std::uint64_t rounds) {
  report_address(name + "_address", address);
  report(name + "_holder_tid", truth.holder_tid);
  report(name + "_waiter_tid", truth.waiter_tid);
  report(name + "_rounds", rounds);
  report(name + "_hold_ns", truth.hold_ns);
  report(name + "_wait_ns", truth.wait_ns);
}

}  // namespace

INCISE_WORKLOAD_FUNCTION void wait_on_mutex(pthread_mutex_t* mutex) {
  pthread_mutex_lock(mutex);
}

INCISE_WORKLOAD_FUNCTION void wait_on_rdlock(pthread_rwlock_t* rwlock) {
  pthread_rwlock_rdlock(rwlock);
}

INCISE_WORKLOAD_FUNCTION void wait_on_wrlock(pthread_rwlock_t* rwlock) {
  pthread_rwlock_wrlock(rwlock);
}

INCISE_WORKLOAD_FUNCTION void wait_on_condvar(pthread_cond_t* cond, pthread_mutex_t* mutex,
                                              const bool* ready) {
  pthread_mutex_lock(mutex);
  while (!*ready) pthread_cond_wait(cond, mutex);
  pthread_mutex_unlock(mutex);
}

INCISE_WORKLOAD_FUNCTION void wait_on_semaphore(sem_t* sem) {
  while (sem_wait(sem) != 0 && errno == EINTR) {
  }
}

INCISE_WORKLOAD_FUNCTION void wait_on_join(pthread_t thread) {
  pthread_join(thread, nullptr);
}

INCISE_WORKLOAD_FUNCTION void hold_while_sleeping(std::uint64_t ns) {
  sleep_ns(ns);
}

namespace {

void run_mutex(const Config& config) {
  static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  Truth truth;
  Turn held, done;
  std::thread holder([&] {
    truth.holder_tid = current_tid();
    for (std::uint64_t round = 1; round <= config.rounds; ++round) {
      pthread_mutex_lock(&mutex);
      const std::uint64_t acquired = monotonic_ns();
      held.set(round);
      hold_while_sleeping(config.hold_us * 1000);
      truth.hold_ns += monotonic_ns() - acquired;
      pthread_mutex_unlock(&mutex);
      done.await(round);
    }
  });
  std::thread waiter([&] {
    truth.waiter_tid = current_tid();
    for (std::uint64_t round = 1; round <= config.rounds; ++round) {
      held.await(round);
      const std::uint64_t start = monotonic_ns();
      wait_on_mutex(&mutex);
      truth.wait_ns += monotonic_ns() - start;
      pthread_mutex_unlock(&mutex);
      done.set(round);
    }
  });
  holder.join();
  waiter.join();
  report_truth("mutex", &mutex, truth, config.rounds);
}

void run_rwlock(const Config& config) {
  static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
  Truth truth;
  std::uint64_t writer_waiter_tid = 0, writer_wait_ns = 0;
  Turn held, reader_done, writer_done;
  std::thread holder([&] {
    truth.holder_tid = current_tid();
    for (std::uint64_t round = 1; round <= config.rounds; ++round) {
      pthread_rwlock_wrlock(&rwlock);
      const std::uint64_t acquired = monotonic_ns();
      held.set(round);
      hold_while_sleeping(config.hold_us * 1000);
      truth.hold_ns += monotonic_ns() - acquired;
      pthread_rwlock_unlock(&rwlock);
      reader_done.await(round);
      writer_done.await(round);
    }
  });
  std::thread reader([&] {
    truth.waiter_tid = current_tid();
    for (std::uint64_t round = 1; round <= config.rounds; ++round) {
      held.await(round);
      const std::uint64_t start = monotonic_ns();
      wait_on_rdlock(&rwlock);
      truth.wait_ns += monotonic_ns() - start;
      pthread_rwlock_unlock(&rwlock);
      reader_done.set(round);
    }
  });
  std::thread writer([&] {
    writer_waiter_tid = current_tid();
    for (std::uint64_t round = 1; round <= config.rounds; ++round) {
      held.await(round);
      const std::uint64_t start = monotonic_ns();
      wait_on_wrlock(&rwlock);
      writer_wait_ns += monotonic_ns() - start;
      pthread_rwlock_unlock(&rwlock);
      writer_done.set(round);
    }
  });
  holder.join();
  reader.join();
  writer.join();
  report_truth("rwlock", &rwlock, truth, config.rounds);
  report("rwlock_writer_waiter_tid", writer_waiter_tid);
  report("rwlock_writer_wait_ns", writer_wait_ns);
}

void run_condvar(const Config& config) {
  static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  static bool ready = false;
  Truth truth;
  Turn waiting, done;
  std::thread signaller([&] {
    truth.holder_tid = current_tid();
    for (std::uint64_t round = 1; round <= config.rounds; ++round) {
      waiting.await(round);
      const std::uint64_t start = monotonic_ns();
      hold_while_sleeping(config.hold_us * 1000);
      pthread_mutex_lock(&mutex);
      ready = true;
      pthread_mutex_unlock(&mutex);
      truth.hold_ns += monotonic_ns() - start;
      pthread_cond_signal(&cond);
      done.await(round);
    }
  });
  std::thread waiter([&] {
    truth.waiter_tid = current_tid();
    for (std::uint64_t round = 1; round <= config.rounds; ++round) {
      pthread_mutex_lock(&mutex);
      ready = false;
      pthread_mutex_unlock(&mutex);
      waiting.set(round);
      const std::uint64_t start = monotonic_ns();
      wait_on_condvar(&cond, &mutex, &ready);
      truth.wait_ns += monotonic_ns() - start;
      done.set(round);
    }
  });
  signaller.join();
  waiter.join();
  report_truth("condvar", &cond, truth, config.rounds);
}

void run_semaphore(const Config& config) {
  static sem_t sem;
  sem_init(&sem, 0, 0);
  Truth truth;
  Turn waiting, done;
  std::thread poster([&] {
    truth.holder_tid = current_tid();
    for (std::uint64_t round = 1; round <= config.rounds; ++round) {
      waiting.await(round);
      const std::uint64_t start = monotonic_ns();
      hold_while_sleeping(config.hold_us * 1000);
      truth.hold_ns += monotonic_ns() - start;
      sem_post(&sem);
      done.await(round);
    }
  });
  std::thread waiter([&] {
    truth.waiter_tid = current_tid();
    for (std::uint64_t round = 1; round <= config.rounds; ++round) {
      waiting.set(round);
      const std::uint64_t start = monotonic_ns();
      wait_on_semaphore(&sem);
      truth.wait_ns += monotonic_ns() - start;
      done.set(round);
    }
  });
  poster.join();
  waiter.join();
  report_truth("semaphore", &sem, truth, config.rounds);
  sem_destroy(&sem);
}

// The semaphore and the turn flags live in a shared mapping made before the
// fork, so both processes see them at the same address.
struct SharedPage {
  sem_t sem;
  std::atomic<std::uint64_t> waiting{0};
  std::atomic<std::uint64_t> hold_ns{0};
};

int run_shared_semaphore(const Config& config) {
  void* memory =
      mmap(nullptr, sizeof(SharedPage), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    std::fprintf(stderr, "wait_kinds: mmap of the shared page failed: %s\n", std::strerror(errno));
    return 1;
  }
  auto* shared = new (memory) SharedPage();
  sem_init(&shared->sem, /*pshared=*/1, 0);
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "wait_kinds: fork failed: %s\n", std::strerror(errno));
    return 1;
  }
  if (child == 0) {
    for (std::uint64_t round = 1; round <= config.rounds; ++round) {
      while (shared->waiting.load(std::memory_order_acquire) != round) sleep_ns(50'000);
      const std::uint64_t start = monotonic_ns();
      hold_while_sleeping(config.hold_us * 1000);
      shared->hold_ns.fetch_add(monotonic_ns() - start);
      sem_post(&shared->sem);
    }
    _exit(0);
  }
  Truth truth;
  truth.holder_tid = static_cast<std::uint64_t>(child);  // its only thread
  truth.waiter_tid = current_tid();
  for (std::uint64_t round = 1; round <= config.rounds; ++round) {
    shared->waiting.store(round, std::memory_order_release);
    const std::uint64_t start = monotonic_ns();
    wait_on_semaphore(&shared->sem);
    truth.wait_ns += monotonic_ns() - start;
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  truth.hold_ns = shared->hold_ns.load();
  report_truth("shared_semaphore", &shared->sem, truth, config.rounds);
  report("shared_semaphore_holder_pid", static_cast<std::uint64_t>(child));
  sem_destroy(&shared->sem);
  munmap(memory, sizeof(SharedPage));
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

void* sleep_then_exit(void* argument) {
  auto* truth = static_cast<Truth*>(argument);
  truth->holder_tid = current_tid();
  const std::uint64_t start = monotonic_ns();
  hold_while_sleeping(truth->hold_ns);
  truth->hold_ns = monotonic_ns() - start;
  return nullptr;
}

void run_join(const Config& config) {
  Truth total;
  total.waiter_tid = current_tid();
  pthread_t first = {};
  for (std::uint64_t round = 1; round <= config.rounds; ++round) {
    Truth truth;
    truth.hold_ns = config.hold_us * 1000;  // in: how long to sleep; out: how long it slept
    pthread_t thread;
    if (pthread_create(&thread, nullptr, sleep_then_exit, &truth) != 0) continue;
    if (round == 1) first = thread;
    const std::uint64_t start = monotonic_ns();
    wait_on_join(thread);
    total.wait_ns += monotonic_ns() - start;
    total.hold_ns += truth.hold_ns;
    // Every round's thread is new; the first one's tid is the one reported.
    if (round == 1) total.holder_tid = truth.holder_tid;
  }
  report_truth("join", reinterpret_cast<const void*>(first), total, config.rounds);
}

int run(int argc, char** argv) {
  Config config;
  Options options("wait_kinds",
                  "Waits on a mutex, an rwlock, a condition variable, a semaphore, a semaphore\n"
                  "posted by another process and a thread join, one after the other, and prints\n"
                  "the truth of each (addresses, holder and waiter tids, hold and wait times).",
                  "wait_kinds --rounds 5 --hold-us 20000");
  options.add("rounds", "waits per scenario", config.rounds);
  options.add("hold-us", "how long each wait lasts, in microseconds", config.hold_us);
  options.parse_or_exit(argc, argv);
  if (config.rounds == 0 || config.hold_us == 0) {
    std::fprintf(stderr, "wait_kinds: --rounds and --hold-us must be at least 1\n");
    return 2;
  }
  report("pid", static_cast<std::uint64_t>(getpid()));
  report("hold_us", config.hold_us);
  run_mutex(config);
  run_rwlock(config);
  run_condvar(config);
  run_semaphore(config);
  if (int status = run_shared_semaphore(config); status != 0) return status;
  run_join(config);
  return 0;
}

}  // namespace
}  // namespace incise::workloads

int main(int argc, char** argv) {
  return incise::workloads::run(argc, argv);
}
