// cpu_shares: a CPU-bound program with known function shares, for checking
// that a profile attributes CPU time to the right functions.
//
// Each worker thread runs rounds of hot_a, hot_b and hot_c with work in the
// ratio 6:3:1 (the same loop body, so about 60% / 30% / 10% of CPU time). Each
// round's length is jittered and its call order shuffled by a fixed-seed
// generator, so the rounds cannot alias with a sampling period, and the run is
// the same every time. The program times every call with
// CLOCK_THREAD_CPUTIME_ID and prints the shares it measured, relative to the
// whole process's CPU time: a test compares a profile with these figures, not
// with the nominal 60/30/10.
//
// hot_a/b/c are C-linkage, non-inlined, never cloned, and end with a call so
// they are not leaf functions (GCC 12 omits the frame pointer in leaves).
//
// With --rounds N and --round-steps M the work is fixed instead of the
// duration (for timing a slowdown under a recorder): no runtime calibration,
// the same work on every run.
//
// Output (stdout, key=value): pid, threads, rounds (all threads), round_steps, cpu_ns.hot_a,
// cpu_ns.hot_b, cpu_ns.hot_c, cpu_ns.process, share.hot_a, share.hot_b,
// share.hot_c, share.other, elapsed_ns, worker_tids.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tools/workloads/cpu_work.h"
#include "tools/workloads/options.h"
#include "tools/workloads/report.h"

namespace incise::workloads {

INCISE_WORKLOAD_FUNCTION std::uint64_t hot_a(std::uint64_t steps, std::uint64_t seed) {
  for (std::uint64_t i = 0; i < steps; ++i) seed = mix_step(seed);
  keep_value(seed);
  return seed;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t hot_b(std::uint64_t steps, std::uint64_t seed) {
  for (std::uint64_t i = 0; i < steps; ++i) seed = mix_step(seed);
  keep_value(seed);
  return seed;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t hot_c(std::uint64_t steps, std::uint64_t seed) {
  for (std::uint64_t i = 0; i < steps; ++i) seed = mix_step(seed);
  keep_value(seed);
  return seed;
}

namespace {

using HotFunction = std::uint64_t (*)(std::uint64_t, std::uint64_t);

struct HotEntry {
  HotFunction function;
  std::uint64_t weight;  // tenths of a round
};
constexpr std::array<HotEntry, 3> kHot = {{{hot_a, 6}, {hot_b, 3}, {hot_c, 1}}};
constexpr std::array<const char*, 3> kHotNames = {"hot_a", "hot_b", "hot_c"};

struct alignas(64) WorkerResult {
  std::uint64_t tid = 0;
  std::uint64_t rounds = 0;
  std::array<std::uint64_t, 3> cpu_ns{};
  std::uint64_t sink = 0;
};

// Mix steps per nanosecond of CPU on this machine, measured once up front.
[[gnu::noinline]] double measure_steps_per_ns() {
  constexpr std::uint64_t kSteps = 4'000'000;
  const std::uint64_t start = thread_cpu_ns();
  std::uint64_t seed = 1;
  for (std::uint64_t i = 0; i < kSteps; ++i) seed = mix_step(seed);
  keep_value(seed);
  const std::uint64_t elapsed = thread_cpu_ns() - start;
  return static_cast<double>(kSteps) / static_cast<double>(elapsed == 0 ? 1 : elapsed);
}

// Runs `rounds` rounds, or until deadline_ns when rounds is 0.
void run_worker(std::uint64_t index, std::uint64_t steps_per_tenth, std::uint64_t rounds,
                std::uint64_t deadline_ns, WorkerResult& result) {
  result.tid = current_tid();
  std::mt19937_64 random(0x5eed0000u + index);
  std::uniform_int_distribution<std::uint64_t> jitter(75, 125);  // percent of a round
  std::array<std::size_t, 3> order = {0, 1, 2};
  std::uint64_t seed = 0x9e3779b97f4a7c15u + index;
  while (rounds != 0 ? result.rounds < rounds : monotonic_ns() < deadline_ns) {
    const std::uint64_t tenth = steps_per_tenth * jitter(random) / 100;
    std::shuffle(order.begin(), order.end(), random);
    for (std::size_t which : order) {
      const std::uint64_t start = thread_cpu_ns();
      seed = kHot[which].function(tenth * kHot[which].weight, seed);
      result.cpu_ns[which] += thread_cpu_ns() - start;
    }
    ++result.rounds;
  }
  result.sink = seed;
}

int run(int argc, char** argv) {
  double seconds = 3;
  std::uint64_t threads = 2;
  std::uint64_t round_us = 1000;
  std::uint64_t rounds_per_thread = 0;
  std::uint64_t round_steps = 0;
  Options options("cpu_shares",
                  "CPU-bound threads run hot_a, hot_b and hot_c with work in the ratio 6:3:1\n"
                  "(about 60/30/10% of CPU). Prints the shares it measured as key=value lines.",
                  "cpu_shares --seconds 3 --threads 2");
  options.add("seconds", "wall-clock duration", seconds);
  options.add("threads", "worker threads", threads);
  options.add("rounds", "fixed work: rounds per thread, ignoring --seconds; 0 = use --seconds",
              rounds_per_thread);
  options.add("round-steps", "mix steps per round (fixed work); 0 = calibrate from --round-us",
              round_steps);
  options.add("round-us", "mean CPU microseconds of one hot_a+hot_b+hot_c round", round_us);
  options.parse_or_exit(argc, argv);
  if (threads == 0 || round_us == 0 || (rounds_per_thread == 0 && seconds <= 0)) {
    std::fprintf(
        stderr, "cpu_shares: --threads, --round-us and --seconds (or --rounds) must be positive\n");
    return 2;
  }

  if (round_steps == 0) {
    round_steps =
        static_cast<std::uint64_t>(measure_steps_per_ns() * static_cast<double>(round_us) * 1000.0);
  }
  const std::uint64_t steps_per_tenth = round_steps / 10 + 1;

  std::vector<WorkerResult> results(threads);
  const std::uint64_t start_ns = monotonic_ns();
  const auto deadline_ns = start_ns + static_cast<std::uint64_t>(seconds * 1e9);
  std::vector<std::thread> workers;
  for (std::uint64_t i = 0; i < threads; ++i) {
    workers.emplace_back(run_worker, i, steps_per_tenth, rounds_per_thread, deadline_ns,
                         std::ref(results[i]));
  }
  for (std::thread& worker : workers) worker.join();
  const std::uint64_t elapsed_ns = monotonic_ns() - start_ns;
  const std::uint64_t process_ns = process_cpu_ns();

  std::array<std::uint64_t, 3> cpu_ns{};
  std::uint64_t rounds = 0;
  std::uint64_t sink = 0;
  std::vector<std::uint64_t> tids;
  for (const WorkerResult& result : results) {
    for (std::size_t i = 0; i < cpu_ns.size(); ++i) cpu_ns[i] += result.cpu_ns[i];
    rounds += result.rounds;
    sink ^= result.sink;
    tids.push_back(result.tid);
  }
  keep_value(sink);

  report("pid", static_cast<std::uint64_t>(getpid()));
  report("threads", threads);
  report("rounds", rounds);
  report("round_steps", round_steps);
  for (std::size_t i = 0; i < cpu_ns.size(); ++i) {
    report(std::string("cpu_ns.") + kHotNames[i], cpu_ns[i]);
  }
  report("cpu_ns.process", process_ns);
  double hot_total = 0;
  for (std::size_t i = 0; i < cpu_ns.size(); ++i) {
    const double share = static_cast<double>(cpu_ns[i]) / static_cast<double>(process_ns);
    hot_total += share;
    report_ratio(std::string("share.") + kHotNames[i], share);
  }
  report_ratio("share.other", hot_total < 1 ? 1 - hot_total : 0);
  report("elapsed_ns", elapsed_ns);
  report_list("worker_tids", tids);
  return 0;
}

}  // namespace
}  // namespace incise::workloads

int main(int argc, char** argv) {
  return incise::workloads::run(argc, argv);
}
