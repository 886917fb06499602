// futex_storm: a switch-heavy program, the case where a recorder's cost per
// futex call and per context switch shows. Worker threads take ONE hot
// pthread mutex in a tight loop with a short critical section; every k-th
// section writes to fresh pages (page faults under the lock, which make the
// holder slow and the others block). Most lock calls are uncontended or
// spin briefly in glibc; many end in a futex wait, and every unlock that
// finds waiters is a FUTEX_WAKE.
//
// It counts its own calls (lock_calls = unlock_calls = threads x iterations)
// and times itself (elapsed_ns, from the first worker's start to the last
// one's end; cpu_ns, the process's CPU time, which on a loaded box moves
// less than the wall time), so tools/bench can compare recorders on fixed
// work. A recorder's in-kernel work for this process (BPF programs, the
// syscall slow path of syscall probes) is charged to its CPU time.
//
// Output (stdout, key=value): pid, threads, iterations_per_thread,
// mutex_address, lock_calls, unlock_calls, faulting_sections, pages_touched,
// elapsed_ns, cpu_ns, worker_tids.
//
//   futex_storm --threads 4 --iterations 100000 --fault-every 50
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "tools/workloads/cpu_work.h"
#include "tools/workloads/options.h"
#include "tools/workloads/report.h"

namespace incise::workloads {
namespace {

struct Config {
  std::uint64_t threads = 4;
  std::uint64_t iterations = 100000;
  std::uint64_t work_steps = 200;
  std::uint64_t outside_steps = 200;
  std::uint64_t fault_every = 50;
  std::uint64_t fault_pages = 1;
};

struct alignas(64) WorkerCounts {
  std::uint64_t tid = 0;
  std::uint64_t lock_calls = 0;
  std::uint64_t unlock_calls = 0;
  std::uint64_t faulting_sections = 0;
  std::uint64_t pages_touched = 0;
  std::uint64_t sink = 0;
};

pthread_mutex_t hot_mutex = PTHREAD_MUTEX_INITIALIZER;

// Never-touched pages handed out under hot_mutex; discarded (MADV_DONTNEED)
// and reused when they run out, after which they fault again.
constexpr std::size_t kPageSize = 4096;
constexpr std::size_t kPages = 8192;
char* arena = nullptr;
std::size_t next_page = 0;

}  // namespace

INCISE_WORKLOAD_FUNCTION std::uint64_t storm_critical_work(std::uint64_t steps,
                                                           std::uint64_t seed) {
  for (std::uint64_t i = 0; i < steps; ++i) seed = mix_step(seed);
  keep_value(seed);
  return seed;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t storm_outside_work(std::uint64_t steps, std::uint64_t seed) {
  for (std::uint64_t i = 0; i < steps; ++i) seed = mix_step(seed);
  keep_value(seed);
  return seed;
}

INCISE_WORKLOAD_FUNCTION void storm_touch_pages(std::size_t pages, WorkerCounts& counts) {
  if (next_page + pages > kPages) {
    madvise(arena, kPages * kPageSize, MADV_DONTNEED);
    next_page = 0;
  }
  char* first = arena + next_page * kPageSize;
  next_page += pages;
  for (std::size_t page = 0; page < pages; ++page) {
    *static_cast<volatile char*>(first + page * kPageSize) = 1;
  }
  counts.pages_touched += pages;
  ++counts.faulting_sections;
}

namespace {

void run_worker(const Config& config, WorkerCounts& counts) {
  counts.tid = current_tid();
  std::uint64_t seed = 0x9e3779b97f4a7c15u ^ counts.tid;
  for (std::uint64_t section = 1; section <= config.iterations; ++section) {
    pthread_mutex_lock(&hot_mutex);
    ++counts.lock_calls;
    seed = storm_critical_work(config.work_steps, seed);
    if (config.fault_every != 0 && section % config.fault_every == 0) {
      storm_touch_pages(config.fault_pages, counts);
    }
    pthread_mutex_unlock(&hot_mutex);
    ++counts.unlock_calls;
    seed = storm_outside_work(config.outside_steps, seed);
  }
  counts.sink = seed;
}

int run(int argc, char** argv) {
  Config config;
  Options options("futex_storm",
                  "Worker threads hammer one pthread mutex with short critical sections; every\n"
                  "k-th section touches fresh pages (page faults under the lock). Prints its\n"
                  "counts and elapsed_ns as key=value lines.",
                  "futex_storm --threads 4 --iterations 100000");
  options.add("threads", "worker threads", config.threads);
  options.add("iterations", "lock calls per worker", config.iterations);
  options.add("work", "mix steps inside each section", config.work_steps);
  options.add("outside-work", "mix steps between sections", config.outside_steps);
  options.add("fault-every", "every k-th section touches fresh pages; 0 = never",
              config.fault_every);
  options.add("fault-pages", "fresh pages per faulting section", config.fault_pages);
  options.parse_or_exit(argc, argv);
  if (config.threads == 0 || config.iterations == 0) {
    std::fprintf(stderr, "futex_storm: --threads and --iterations must be at least 1\n");
    return 2;
  }
  if (config.fault_pages > kPages) {
    std::fprintf(stderr, "futex_storm: --fault-pages is at most %zu\n", kPages);
    return 2;
  }
  void* base = mmap(nullptr, kPages * kPageSize, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    std::fprintf(stderr, "futex_storm: mmap failed: %s\n", std::strerror(errno));
    return 1;
  }
  arena = static_cast<char*>(base);
  madvise(arena, kPages * kPageSize, MADV_NOHUGEPAGE);

  std::vector<WorkerCounts> counts(config.threads);
  const std::uint64_t start_ns = monotonic_ns();
  std::vector<std::thread> workers;
  for (WorkerCounts& worker_counts : counts) {
    workers.emplace_back(run_worker, std::cref(config), std::ref(worker_counts));
  }
  for (std::thread& worker : workers) worker.join();
  const std::uint64_t elapsed_ns = monotonic_ns() - start_ns;
  const std::uint64_t cpu_ns = process_cpu_ns();

  WorkerCounts total;
  std::vector<std::uint64_t> tids;
  for (const WorkerCounts& c : counts) {
    total.lock_calls += c.lock_calls;
    total.unlock_calls += c.unlock_calls;
    total.faulting_sections += c.faulting_sections;
    total.pages_touched += c.pages_touched;
    total.sink ^= c.sink;
    tids.push_back(c.tid);
  }
  report("pid", static_cast<std::uint64_t>(getpid()));
  report("threads", config.threads);
  report("iterations_per_thread", config.iterations);
  report_address("mutex_address", &hot_mutex);
  report("lock_calls", total.lock_calls);
  report("unlock_calls", total.unlock_calls);
  report("faulting_sections", total.faulting_sections);
  report("pages_touched", total.pages_touched);
  report("elapsed_ns", elapsed_ns);
  report("cpu_ns", cpu_ns);
  report_list("worker_tids", tids);
  keep_value(total.sink);
  munmap(arena, kPages * kPageSize);
  return 0;
}

}  // namespace
}  // namespace incise::workloads

int main(int argc, char** argv) {
  return incise::workloads::run(argc, argv);
}
