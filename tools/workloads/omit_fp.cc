// omit_fp: a CPU-bound call chain compiled WITHOUT frame pointers
// (-fomit-frame-pointer -O2), for DWARF (.eh_frame) unwinding work: a
// frame-pointer walk from hot_leaf_work cannot reach main, a CFI unwind can.
//
// The chain is main -> level1 -> level2 -> hot_leaf_work. All are C-linkage,
// never inlined or cloned; level1 and level2 use their callee's result after
// the call, so neither call is a tail call and every frame stays on the stack.
// hot_leaf_work is a true leaf and holds almost all samples.
//
// With --calls N the work is fixed instead of the duration.
//
// Output (stdout, key=value): pid, calls (hot_leaf_work calls), elapsed_ns.
#include <unistd.h>

#include <cstdint>
#include <cstdio>

#include "tools/workloads/cpu_work.h"
#include "tools/workloads/options.h"
#include "tools/workloads/report.h"

INCISE_WORKLOAD_FUNCTION std::uint64_t hot_leaf_work(std::uint64_t steps, std::uint64_t seed) {
  for (std::uint64_t i = 0; i < steps; ++i) seed = incise::workloads::mix_step(seed);
  return seed;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t level2(std::uint64_t steps, std::uint64_t seed) {
  return hot_leaf_work(steps, seed) ^ (seed >> 3);
}

INCISE_WORKLOAD_FUNCTION std::uint64_t level1(std::uint64_t steps, std::uint64_t seed) {
  return level2(steps, seed) + (seed << 1);
}

int main(int argc, char** argv) {
  using namespace incise::workloads;
  double seconds = 2;
  std::uint64_t steps = 200000;
  std::uint64_t fixed_calls = 0;
  Options options("omit_fp",
                  "Burns CPU in main -> level1 -> level2 -> hot_leaf_work, built without frame\n"
                  "pointers, for DWARF unwinding. Prints the call count as key=value lines.",
                  "omit_fp --seconds 2");
  options.add("seconds", "wall-clock duration", seconds);
  options.add("steps", "mix steps per hot_leaf_work call", steps);
  options.add("calls", "fixed work: hot_leaf_work calls, ignoring --seconds; 0 = use --seconds",
              fixed_calls);
  options.parse_or_exit(argc, argv);

  const std::uint64_t start_ns = monotonic_ns();
  const auto deadline_ns = start_ns + static_cast<std::uint64_t>(seconds * 1e9);
  std::uint64_t seed = 0x9e3779b97f4a7c15u;
  std::uint64_t calls = 0;
  while (fixed_calls != 0 ? calls < fixed_calls : monotonic_ns() < deadline_ns) {
    seed = level1(steps, seed);
    ++calls;
  }
  keep_value(seed);
  report("pid", static_cast<std::uint64_t>(getpid()));
  report("calls", calls);
  report("elapsed_ns", monotonic_ns() - start_ns);
  return 0;
}
