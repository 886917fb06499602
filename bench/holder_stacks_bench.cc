// What correlate's holder pass costs when one lock is held across a whole
// run while the holder's samples land on many distinct stacks (a coarse
// lock, a holder that never lets go): HolderActivityBuilder counting N
// samples, each on a stack of its own in scattered id order, inside one
// section. Time per sample should stay flat as N grows (stack_counts.h);
// an insert into one sorted vector per new stack grows with N.
//
//   build/bench/holder_stacks_bench
#include <benchmark/benchmark.h>

#include "analyzer/analyses/locks/holder_activity.h"

namespace {

using namespace incise;

void BM_DistinctStacksInsideOneSection(benchmark::State& state) {
  const auto samples = static_cast<uint64_t>(state.range(0));
  for (auto _ : state) {
    analyzer::HolderActivityBuilder builder({});
    builder.addSection({.lock = {1, 0x1000}, .tid = 2, .stack_id = 7, .end = 10 * samples + 10});
    for (uint64_t i = 0; i < samples; ++i) {
      // An odd multiplier permutes the ids: new stacks arrive out of order.
      uint64_t stack = 1 + i * 0x9e3779b97f4a7c15ULL % (1ULL << 40);
      builder.add(format::CpuSample{.time = 1 + 10 * i, .pid = 1, .tid = 2, .stack_id = stack});
      builder.settle(2 + 10 * i, nullptr);
    }
    benchmark::DoNotOptimize(builder.finish());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * samples));
}
BENCHMARK(BM_DistinctStacksInsideOneSection)
    ->Arg(50'000)
    ->Arg(200'000)
    ->Arg(800'000)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
