// fault_story: page faults in known functions, for checking that samples
// of the page-faults event and per-sample counters land where the program
// took its faults.
//
// touch_pages_a writes one byte to each of --pages-a fresh pages, then
// touch_pages_b to each of --pages-b others (anonymous memory never touched
// before, without transparent huge pages: one minor fault per page). Between
// two pages each runs --steps-per-page rounds of CPU work, so cpu-clock
// samples also land in them and the faults come at a pace the kernel does
// not throttle. burn_after_faults then burns --burn-ms of CPU without
// faulting, so samples follow the last fault.
//
// The program counts its own faults with getrusage(RUSAGE_THREAD) around
// each function (which includes any fault on the function's own code or
// stack, not only its pages) and the whole process's with
// getrusage(RUSAGE_SELF) at the end.
//
// Output (stdout, key=value): pid, tid, pages.touch_pages_a,
// pages.touch_pages_b, minor_faults.touch_pages_a, minor_faults.touch_pages_b,
// major_faults.touch_pages_a, major_faults.touch_pages_b, minor_faults.process,
// major_faults.process, elapsed_ns.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

#include "tools/workloads/cpu_work.h"
#include "tools/workloads/options.h"
#include "tools/workloads/report.h"

namespace incise::workloads {

constexpr std::uint64_t kPageSize = 4096;

// Inlined into each named function, so its faults and its work are theirs.
[[gnu::always_inline]] inline std::uint64_t touch_fresh_pages(char* first, std::uint64_t pages,
                                                              std::uint64_t steps,
                                                              std::uint64_t seed) {
  for (std::uint64_t page = 0; page < pages; ++page) {
    // A volatile store, so each page is really written (a zero-fill fault).
    *static_cast<volatile char*>(first + page * kPageSize) = 1;
    for (std::uint64_t i = 0; i < steps; ++i) seed = mix_step(seed);
  }
  return seed;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t touch_pages_a(char* first, std::uint64_t pages,
                                                     std::uint64_t steps, std::uint64_t seed) {
  seed = touch_fresh_pages(first, pages, steps, seed);
  keep_value(seed);
  return seed;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t touch_pages_b(char* first, std::uint64_t pages,
                                                     std::uint64_t steps, std::uint64_t seed) {
  seed = touch_fresh_pages(first, pages, steps, seed);
  keep_value(seed);
  return seed;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t burn_after_faults(std::uint64_t cpu_ns, std::uint64_t seed) {
  seed = burn_thread_cpu(cpu_ns, seed);
  keep_value(seed);
  return seed;
}

namespace {

rusage usage(int who) {
  rusage now{};
  getrusage(who, &now);
  return now;
}

using TouchFunction = std::uint64_t (*)(char*, std::uint64_t, std::uint64_t, std::uint64_t);

// Runs `touch` and reports the faults this thread took across it.
std::uint64_t runCounted(const char* name, TouchFunction touch, char* first, std::uint64_t pages,
                         std::uint64_t steps, std::uint64_t seed) {
  rusage before = usage(RUSAGE_THREAD);
  seed = touch(first, pages, steps, seed);
  rusage after = usage(RUSAGE_THREAD);
  std::string suffix = std::string(".") + name;
  report("pages" + suffix, pages);
  report("minor_faults" + suffix, static_cast<std::uint64_t>(after.ru_minflt - before.ru_minflt));
  report("major_faults" + suffix, static_cast<std::uint64_t>(after.ru_majflt - before.ru_majflt));
  return seed;
}

}  // namespace

}  // namespace incise::workloads

int main(int argc, char** argv) {
  using namespace incise::workloads;
  std::uint64_t pages_a = 3000, pages_b = 1000, steps = 20000, burn_ms = 300;
  Options options("fault_story", "Page faults in two known functions, then CPU without faults.",
                  "fault_story --pages-a 3000 --pages-b 1000");
  options.add("pages-a", "fresh pages touch_pages_a writes (one fault each)", pages_a);
  options.add("pages-b", "fresh pages touch_pages_b writes", pages_b);
  options.add("steps-per-page", "rounds of CPU work after each page (pacing)", steps);
  options.add("burn-ms", "ms of CPU burned in burn_after_faults at the end", burn_ms);
  options.parse_or_exit(argc, argv);
  constexpr std::uint64_t kMaxPages = std::uint64_t{1} << 20;  // 4 GiB of address space
  if (pages_a > kMaxPages || pages_b > kMaxPages || burn_ms > 60'000) {
    std::fprintf(stderr, "fault_story: at most %llu pages each and 60000 ms\n",
                 static_cast<unsigned long long>(kMaxPages));
    return 2;
  }

  std::uint64_t start = monotonic_ns();
  std::uint64_t bytes = (pages_a + pages_b + 1) * kPageSize;
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    std::perror("fault_story: mmap");
    return 1;
  }
  // One fault per 4 KiB page, never one 2 MiB fault for many pages.
  madvise(base, bytes, MADV_NOHUGEPAGE);
  char* first = static_cast<char*>(base);

  report("pid", static_cast<std::uint64_t>(getpid()));
  report("tid", current_tid());
  std::uint64_t seed = 0x9e3779b97f4a7c15ull;
  seed = runCounted("touch_pages_a", touch_pages_a, first, pages_a, steps, seed);
  seed =
      runCounted("touch_pages_b", touch_pages_b, first + pages_a * kPageSize, pages_b, steps, seed);
  seed = burn_after_faults(burn_ms * 1'000'000, seed);
  keep_value(seed);
  rusage process = usage(RUSAGE_SELF);
  report("minor_faults.process", static_cast<std::uint64_t>(process.ru_minflt));
  report("major_faults.process", static_cast<std::uint64_t>(process.ru_majflt));
  report("elapsed_ns", monotonic_ns() - start);
  munmap(base, bytes);
  return 0;
}
