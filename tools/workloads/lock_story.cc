// lock_story: reproduces the story incise exists for (README.md: lock holders
// preempted or faulting inside their critical sections). Worker threads
// contend on ONE pthread mutex; inside the critical section the holder does
// a little work (critical_work), every k-th time touches never-touched pages
// (touch_fresh_pages: page faults while holding), every m-th time burns CPU
// for longer than a scheduler slice while CPU hog threads (hog_spin)
// compete, so it is preempted while holding (burn_cpu_in_lock), and every
// y-th time calls sched_yield while holding (yield_in_lock). Optionally it
// also sleeps while holding (sleep_in_lock: blocked, not preempted).
//
// It counts its own calls, so a recorder's lock intervals can be compared
// with exact numbers: lock_calls (pthread_mutex_lock), trylock_calls,
// trylock_acquired, unlock_calls (pthread_mutex_unlock) and critical_sections
// (= lock_calls + trylock_acquired = unlock_calls), all on the mutex at
// mutex_address. Page faults and context switches inside special sections are
// measured with getrusage(RUSAGE_THREAD) around them (not around ordinary
// sections, whose cost that would double).
//
// Output (stdout, key=value): pid, threads, hogs, iterations_per_thread,
// mutex_address, lock_calls, trylock_calls, trylock_acquired, unlock_calls,
// critical_sections, faulting_sections, pages_touched, minor_faults_in_lock,
// burn_sections, yield_sections, sleep_sections, preempted_sections,
// involuntary_switches_in_lock, voluntary_switches_in_lock, wait_ns_total,
// hold_ns_total, elapsed_ns, worker_tids.
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
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
  std::uint64_t iterations = 12000;
  double seconds = 0;
  std::uint64_t work_steps = 2000;
  std::uint64_t outside_steps = 4000;
  std::uint64_t fault_every = 25;
  std::uint64_t fault_pages = 8;
  std::uint64_t burn_every = 500;
  std::uint64_t burn_us = 4000;
  std::uint64_t yield_every = 100;
  std::uint64_t sleep_every = 0;
  std::uint64_t sleep_us = 1000;
  std::uint64_t trylock_every = 0;
  std::uint64_t hogs = 0;
};

// Counts of one worker thread, summed at the end; padded so workers do not
// share cache lines.
struct alignas(64) WorkerCounts {
  std::uint64_t tid = 0;
  std::uint64_t lock_calls = 0;
  std::uint64_t trylock_calls = 0;
  std::uint64_t trylock_acquired = 0;
  std::uint64_t unlock_calls = 0;
  std::uint64_t faulting_sections = 0;
  std::uint64_t pages_touched = 0;
  std::uint64_t minor_faults_in_lock = 0;
  std::uint64_t burn_sections = 0;
  std::uint64_t yield_sections = 0;
  std::uint64_t sleep_sections = 0;
  std::uint64_t preempted_sections = 0;
  std::uint64_t involuntary_switches_in_lock = 0;
  std::uint64_t voluntary_switches_in_lock = 0;
  std::uint64_t wait_ns_total = 0;
  std::uint64_t hold_ns_total = 0;
  std::uint64_t sink = 0;

  void add(const WorkerCounts& other) {
    lock_calls += other.lock_calls;
    trylock_calls += other.trylock_calls;
    trylock_acquired += other.trylock_acquired;
    unlock_calls += other.unlock_calls;
    faulting_sections += other.faulting_sections;
    pages_touched += other.pages_touched;
    minor_faults_in_lock += other.minor_faults_in_lock;
    burn_sections += other.burn_sections;
    yield_sections += other.yield_sections;
    sleep_sections += other.sleep_sections;
    preempted_sections += other.preempted_sections;
    involuntary_switches_in_lock += other.involuntary_switches_in_lock;
    voluntary_switches_in_lock += other.voluntary_switches_in_lock;
    wait_ns_total += other.wait_ns_total;
    hold_ns_total += other.hold_ns_total;
    sink ^= other.sink;
  }
};

pthread_mutex_t story_mutex = PTHREAD_MUTEX_INITIALIZER;

// Never-touched anonymous memory, handed out a few pages at a time by the lock
// holder (so only ever used under story_mutex). When it runs out it is
// discarded with MADV_DONTNEED, after which its pages fault again.
class FreshPages {
 public:
  static constexpr std::size_t kPageSize = 4096;
  static constexpr std::size_t kPages = 16384;  // 64 MiB of address space

  bool map() {
    void* base = mmap(nullptr, kPages * kPageSize, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) return false;
    base_ = static_cast<char*>(base);
    // One fault per 4 KiB page, never one 2 MiB fault for many pages.
    madvise(base_, kPages * kPageSize, MADV_NOHUGEPAGE);
    return true;
  }
  ~FreshPages() {
    if (base_ != nullptr) munmap(base_, kPages * kPageSize);
  }

  char* take(std::size_t pages) {
    if (next_ + pages > kPages) {
      madvise(base_, kPages * kPageSize, MADV_DONTNEED);
      next_ = 0;
    }
    char* first = base_ + next_ * kPageSize;
    next_ += pages;
    return first;
  }

 private:
  char* base_ = nullptr;
  std::size_t next_ = 0;
};

FreshPages fresh_pages;
std::atomic<bool> hogs_stop{false};

// Context switches and faults of this thread across one special section.
class SectionProbe {
 public:
  SectionProbe() { getrusage(RUSAGE_THREAD, &before_); }
  void finish(WorkerCounts& counts) {
    rusage after{};
    getrusage(RUSAGE_THREAD, &after);
    const auto involuntary = static_cast<std::uint64_t>(after.ru_nivcsw - before_.ru_nivcsw);
    counts.involuntary_switches_in_lock += involuntary;
    counts.voluntary_switches_in_lock +=
        static_cast<std::uint64_t>(after.ru_nvcsw - before_.ru_nvcsw);
    counts.minor_faults_in_lock += static_cast<std::uint64_t>(after.ru_minflt - before_.ru_minflt);
    if (involuntary > 0) ++counts.preempted_sections;
  }

 private:
  rusage before_{};
};

}  // namespace

// The functions whose names a profile of this workload should show.
INCISE_WORKLOAD_FUNCTION std::uint64_t critical_work(std::uint64_t steps, std::uint64_t seed) {
  for (std::uint64_t i = 0; i < steps; ++i) seed = mix_step(seed);
  keep_value(seed);
  return seed;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t outside_work(std::uint64_t steps, std::uint64_t seed) {
  for (std::uint64_t i = 0; i < steps; ++i) seed = mix_step(seed);
  keep_value(seed);
  return seed;
}

INCISE_WORKLOAD_FUNCTION void touch_fresh_pages(std::size_t pages, WorkerCounts& counts) {
  char* first = fresh_pages.take(pages);
  for (std::size_t page = 0; page < pages; ++page) {
    // A volatile store, so each page is really written (a zero-fill fault).
    *static_cast<volatile char*>(first + page * FreshPages::kPageSize) = 1;
  }
  counts.pages_touched += pages;
  ++counts.faulting_sections;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t burn_cpu_in_lock(std::uint64_t cpu_ns, std::uint64_t seed) {
  seed = burn_thread_cpu(cpu_ns, seed);
  keep_value(seed);
  return seed;
}

INCISE_WORKLOAD_FUNCTION void yield_in_lock() {
  sched_yield();
  asm volatile("");  // not a tail call: keeps this frame on the stack during the yield
}

INCISE_WORKLOAD_FUNCTION void sleep_in_lock(std::uint64_t duration_ns) {
  sleep_ns(duration_ns);
}

INCISE_WORKLOAD_FUNCTION void hog_spin() {
  std::uint64_t seed = 0x9e3779b97f4a7c15u;
  while (!hogs_stop.load(std::memory_order_relaxed)) {
    for (int i = 0; i < 4096; ++i) seed = mix_step(seed);
  }
  keep_value(seed);
}

namespace {

bool is_due(std::uint64_t section, std::uint64_t every) {
  return every != 0 && section % every == 0;
}

void acquire(std::uint64_t section, const Config& config, WorkerCounts& counts) {
  if (is_due(section, config.trylock_every)) {
    ++counts.trylock_calls;
    if (pthread_mutex_trylock(&story_mutex) == 0) {
      ++counts.trylock_acquired;
      return;
    }
  }
  ++counts.lock_calls;
  pthread_mutex_lock(&story_mutex);
}

// The body of one critical section; `section` counts from 1 per thread.
std::uint64_t run_critical_section(std::uint64_t section, const Config& config,
                                   WorkerCounts& counts, std::uint64_t seed) {
  seed = critical_work(config.work_steps, seed);
  const bool faults = is_due(section, config.fault_every);
  const bool burns = is_due(section, config.burn_every);
  const bool yields = is_due(section, config.yield_every);
  const bool sleeps = is_due(section, config.sleep_every);
  if (!faults && !burns && !yields && !sleeps) return seed;

  SectionProbe probe;
  if (faults) touch_fresh_pages(config.fault_pages, counts);
  if (burns) {
    seed = burn_cpu_in_lock(config.burn_us * 1000, seed);
    ++counts.burn_sections;
  }
  if (yields) {
    yield_in_lock();
    ++counts.yield_sections;
  }
  if (sleeps) {
    sleep_in_lock(config.sleep_us * 1000);
    ++counts.sleep_sections;
  }
  probe.finish(counts);
  return seed;
}

void run_worker(const Config& config, std::uint64_t deadline_ns, WorkerCounts& counts) {
  counts.tid = current_tid();
  std::uint64_t seed = 0x2545f4914f6cdd1du ^ counts.tid;
  for (std::uint64_t section = 1;; ++section) {
    if (config.iterations != 0 ? section > config.iterations : monotonic_ns() >= deadline_ns) {
      break;
    }
    const std::uint64_t requested = monotonic_ns();
    acquire(section, config, counts);
    const std::uint64_t acquired = monotonic_ns();
    seed = run_critical_section(section, config, counts, seed);
    const std::uint64_t released = monotonic_ns();
    pthread_mutex_unlock(&story_mutex);
    ++counts.unlock_calls;
    counts.wait_ns_total += acquired - requested;
    counts.hold_ns_total += released - acquired;
    seed = outside_work(config.outside_steps, seed);
  }
  counts.sink = seed;
}

int run(int argc, char** argv) {
  Config config;
  config.hogs = static_cast<std::uint64_t>(sysconf(_SC_NPROCESSORS_ONLN));
  Options options("lock_story",
                  "Worker threads contend on one pthread mutex; the holder sometimes takes page\n"
                  "faults, is preempted (CPU hogs compete) or yields inside the critical section.\n"
                  "Prints exact lock/trylock/unlock counts as key=value lines.",
                  "lock_story --threads 4 --seconds 2");
  options.add("threads", "worker threads contending on the mutex", config.threads);
  options.add("iterations", "critical sections per worker; 0 = run for --seconds",
              config.iterations);
  options.add("seconds", "duration when --iterations is 0", config.seconds);
  options.add("work", "mix steps of critical_work inside each section", config.work_steps);
  options.add("outside-work", "mix steps between sections (outside the lock)",
              config.outside_steps);
  options.add("fault-every", "every k-th section touches fresh pages; 0 = never",
              config.fault_every);
  options.add("fault-pages", "fresh pages touched per faulting section", config.fault_pages);
  options.add("burn-every", "every m-th section burns CPU (preempted by hogs); 0 = never",
              config.burn_every);
  options.add("burn-us", "CPU microseconds burnt in a burning section", config.burn_us);
  options.add("yield-every", "every y-th section calls sched_yield while holding; 0 = never",
              config.yield_every);
  options.add("sleep-every", "every s-th section sleeps while holding; 0 = never",
              config.sleep_every);
  options.add("sleep-us", "microseconds slept in a sleeping section", config.sleep_us);
  options.add("trylock-every", "every t-th acquisition tries pthread_mutex_trylock first",
              config.trylock_every);
  options.add("hogs", "CPU hog threads competing with the holder; defaults to the online CPUs",
              config.hogs);
  options.parse_or_exit(argc, argv);
  if (config.threads == 0) {
    std::fprintf(stderr, "lock_story: --threads must be at least 1\n");
    return 2;
  }
  if (config.iterations == 0 && config.seconds <= 0) {
    std::fprintf(stderr, "lock_story: give --iterations N or --seconds S (with --iterations 0)\n");
    return 2;
  }
  if (config.fault_pages > FreshPages::kPages) {
    std::fprintf(stderr, "lock_story: --fault-pages is at most %zu\n", FreshPages::kPages);
    return 2;
  }
  if (!fresh_pages.map()) {
    std::fprintf(stderr, "lock_story: mmap of the fresh-page arena failed: %s\n",
                 std::strerror(errno));
    return 1;
  }

  std::vector<std::thread> hogs;
  for (std::uint64_t i = 0; i < config.hogs; ++i) hogs.emplace_back(hog_spin);

  std::vector<WorkerCounts> counts(config.threads);
  const std::uint64_t start_ns = monotonic_ns();
  const auto deadline_ns = start_ns + static_cast<std::uint64_t>(config.seconds * 1e9);
  std::vector<std::thread> workers;
  for (WorkerCounts& worker_counts : counts) {
    workers.emplace_back(run_worker, std::cref(config), deadline_ns, std::ref(worker_counts));
  }
  for (std::thread& worker : workers) worker.join();
  const std::uint64_t elapsed_ns = monotonic_ns() - start_ns;
  hogs_stop.store(true);
  for (std::thread& hog : hogs) hog.join();

  WorkerCounts total;
  std::vector<std::uint64_t> tids;
  for (const WorkerCounts& worker_counts : counts) {
    total.add(worker_counts);
    tids.push_back(worker_counts.tid);
  }
  report("pid", static_cast<std::uint64_t>(getpid()));
  report("threads", config.threads);
  report("hogs", config.hogs);
  report("iterations_per_thread", config.iterations);
  report_address("mutex_address", &story_mutex);
  report("lock_calls", total.lock_calls);
  report("trylock_calls", total.trylock_calls);
  report("trylock_acquired", total.trylock_acquired);
  report("unlock_calls", total.unlock_calls);
  report("critical_sections", total.lock_calls + total.trylock_acquired);
  report("faulting_sections", total.faulting_sections);
  report("pages_touched", total.pages_touched);
  report("minor_faults_in_lock", total.minor_faults_in_lock);
  report("burn_sections", total.burn_sections);
  report("yield_sections", total.yield_sections);
  report("sleep_sections", total.sleep_sections);
  report("preempted_sections", total.preempted_sections);
  report("involuntary_switches_in_lock", total.involuntary_switches_in_lock);
  report("voluntary_switches_in_lock", total.voluntary_switches_in_lock);
  report("wait_ns_total", total.wait_ns_total);
  report("hold_ns_total", total.hold_ns_total);
  report("elapsed_ns", elapsed_ns);
  report_list("worker_tids", tids);
  keep_value(total.sink);
  return 0;
}

}  // namespace
}  // namespace incise::workloads

int main(int argc, char** argv) {
  return incise::workloads::run(argc, argv);
}
