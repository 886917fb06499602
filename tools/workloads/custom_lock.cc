// custom_lock: threads share a lock implemented by the program itself, for
// `incise-record --lock-probe BIN:my_spin_acquire:my_spin_release`.
//
// my_spin_acquire(struct my_lock*) and my_spin_release(struct my_lock*) are
// C-linkage, exported (.dynsym and .symtab), never inlined or cloned, and take
// the lock's address as their first argument. The lock is a test-and-test-and-
// set spinlock that yields the CPU after a while, so waiters make progress on
// few cores. Every call is counted by the program.
//
// Output (stdout, key=value): pid, threads, iterations_per_thread,
// lock_address, acquire_calls, release_calls, contended_acquires (acquires
// that found the lock taken), elapsed_ns, worker_tids.
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "tools/workloads/cpu_work.h"
#include "tools/workloads/options.h"
#include "tools/workloads/report.h"

struct my_lock {
  std::atomic<int> taken{0};
};

// Returns whether the lock was found taken (the acquire had to wait).
INCISE_WORKLOAD_FUNCTION bool my_spin_acquire(struct my_lock* lock) {
  bool waited = false;
  int spins = 0;
  while (lock->taken.exchange(1, std::memory_order_acquire) != 0) {
    waited = true;
    while (lock->taken.load(std::memory_order_relaxed) != 0) {
      if (++spins % 64 == 0) {
        sched_yield();
      } else {
        __builtin_ia32_pause();
      }
    }
  }
  return waited;
}

INCISE_WORKLOAD_FUNCTION void my_spin_release(struct my_lock* lock) {
  lock->taken.store(0, std::memory_order_release);
}

namespace incise::workloads {

INCISE_WORKLOAD_FUNCTION std::uint64_t custom_critical_work(std::uint64_t steps,
                                                            std::uint64_t seed) {
  for (std::uint64_t i = 0; i < steps; ++i) seed = mix_step(seed);
  keep_value(seed);
  return seed;
}

namespace {

my_lock shared_lock;

struct alignas(64) WorkerCounts {
  std::uint64_t tid = 0;
  std::uint64_t acquire_calls = 0;
  std::uint64_t release_calls = 0;
  std::uint64_t contended_acquires = 0;
  std::uint64_t sink = 0;
};

void run_worker(std::uint64_t iterations, std::uint64_t work_steps, WorkerCounts& counts) {
  counts.tid = current_tid();
  std::uint64_t seed = 0x2545f4914f6cdd1du ^ counts.tid;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    ++counts.acquire_calls;
    if (my_spin_acquire(&shared_lock)) ++counts.contended_acquires;
    seed = custom_critical_work(work_steps, seed);
    my_spin_release(&shared_lock);
    ++counts.release_calls;
    seed = custom_critical_work(work_steps, seed);
  }
  counts.sink = seed;
}

int run(int argc, char** argv) {
  std::uint64_t threads = 4;
  std::uint64_t iterations = 20000;
  std::uint64_t work_steps = 1000;
  Options options("custom_lock",
                  "Threads share a lock with the program's own my_spin_acquire/my_spin_release\n"
                  "(lock address = first argument). Prints exact call counts as key=value lines.",
                  "custom_lock --threads 4 --iterations 20000");
  options.add("threads", "worker threads", threads);
  options.add("iterations", "acquire/release pairs per thread", iterations);
  options.add("work", "mix steps inside and between critical sections", work_steps);
  options.parse_or_exit(argc, argv);
  if (threads == 0) {
    std::fprintf(stderr, "custom_lock: --threads must be at least 1\n");
    return 2;
  }

  std::vector<WorkerCounts> counts(threads);
  const std::uint64_t start_ns = monotonic_ns();
  std::vector<std::thread> workers;
  for (WorkerCounts& worker_counts : counts) {
    workers.emplace_back(run_worker, iterations, work_steps, std::ref(worker_counts));
  }
  for (std::thread& worker : workers) worker.join();
  const std::uint64_t elapsed_ns = monotonic_ns() - start_ns;

  WorkerCounts total;
  std::vector<std::uint64_t> tids;
  for (const WorkerCounts& worker_counts : counts) {
    total.acquire_calls += worker_counts.acquire_calls;
    total.release_calls += worker_counts.release_calls;
    total.contended_acquires += worker_counts.contended_acquires;
    total.sink ^= worker_counts.sink;
    tids.push_back(worker_counts.tid);
  }
  keep_value(total.sink);
  report("pid", static_cast<std::uint64_t>(getpid()));
  report("threads", threads);
  report("iterations_per_thread", iterations);
  report_address("lock_address", &shared_lock);
  report("acquire_calls", total.acquire_calls);
  report("release_calls", total.release_calls);
  report("contended_acquires", total.contended_acquires);
  report("elapsed_ns", elapsed_ns);
  report_list("worker_tids", tids);
  return 0;
}

}  // namespace
}  // namespace incise::workloads

int main(int argc, char** argv) {
  return incise::workloads::run(argc, argv);
}
