// What cutting the recorder's own frames costs per stack (EventSink runs it
// on every stack before interning): OwnFrames::leading on a stack whose leaf
// is ordinary kernel text (the common case: a bounds check) and on one taken
// by a tracepoint program (program, glue, then __schedule), with the ranges
// of this kernel's sizes (a dozen programs, ~80 glue functions); and the
// one pass over /proc/kallsyms at start (as root: addresses are hidden
// otherwise), which the recorder runs on a thread while the sources load.
//
//   build/bench/own_frames_bench
#include <benchmark/benchmark.h>

#include <vector>

#include "recorder/metadata/own_frames.h"

namespace {

incise::recorder::OwnFrames ranges() {
  incise::recorder::OwnFrames own;
  for (uint64_t i = 0; i < 12; ++i)
    own.addProgramRange(0xffffffffc0000000 + i * 0x2000, 0xffffffffc0000800 + i * 0x2000);
  for (uint64_t i = 0; i < 80; ++i)
    own.addGlueRange(0xffffffff81200000 + i * 0x1000, 0xffffffff81200100 + i * 0x1000);
  own.finish();
  return own;
}

void BM_OrdinaryLeaf(benchmark::State& state) {
  const incise::recorder::OwnFrames own = ranges();
  const std::vector<uint64_t> stack = {0xffffffff81900010, 0xffffffff81900200, 0xffffffff81000130};
  for (auto _ : state) benchmark::DoNotOptimize(own.leading(stack));
}
BENCHMARK(BM_OrdinaryLeaf);

void BM_StackTakenByAProgram(benchmark::State& state) {
  const incise::recorder::OwnFrames own = ranges();
  const std::vector<uint64_t> stack = {0xffffffffc0006234, 0xffffffff81230040, 0xffffffff81900010,
                                       0xffffffff81900200};
  for (auto _ : state) benchmark::DoNotOptimize(own.leading(stack));
}
BENCHMARK(BM_StackTakenByAProgram);

void BM_ReadKallsyms(benchmark::State& state) {
  size_t glue = 0;
  for (auto _ : state) glue = incise::recorder::OwnFrames::read("/proc/kallsyms").glueRanges();
  state.counters["glue_functions"] = static_cast<double>(glue);
}
BENCHMARK(BM_ReadKallsyms)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
