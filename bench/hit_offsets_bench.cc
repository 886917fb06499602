// What noting a large object's frame offsets costs (ProcessTracker notes
// every frame of a new stack in a large object that its direct-mapped
// filter does not catch): 3 M notes of 300 k distinct offsets of a 40 MB
// object, skewed as frames repeat, into HitOffsets and, for comparison,
// into the std::unordered_set it replaced.
//
//   build/bench/hit_offsets_bench
#include <benchmark/benchmark.h>

#include <random>
#include <unordered_set>
#include <vector>

#include "recorder/metadata/hit_offsets.h"

namespace {

const std::vector<uint64_t>& notes() {
  static const std::vector<uint64_t> all = [] {
    std::mt19937_64 random(1);
    std::vector<uint64_t> distinct(300000);
    for (uint64_t& offset : distinct) offset = random() % 40000000;
    std::uniform_real_distribution<double> unit(0, 1);
    std::vector<uint64_t> out(3000000);
    for (uint64_t& note : out) {
      double u = unit(random);
      note = distinct[static_cast<size_t>(u * u * u * static_cast<double>(distinct.size()))];
    }
    return out;
  }();
  return all;
}

void BM_HitOffsets(benchmark::State& state) {
  for (auto _ : state) {
    incise::recorder::HitOffsets offsets;
    for (uint64_t note : notes()) offsets.add(note);
    benchmark::DoNotOptimize(offsets.size());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(notes().size()));
}
BENCHMARK(BM_HitOffsets)->Unit(benchmark::kMillisecond);

void BM_UnorderedSet(benchmark::State& state) {
  for (auto _ : state) {
    std::unordered_set<uint64_t> offsets;
    for (uint64_t note : notes()) offsets.insert(note);
    benchmark::DoNotOptimize(offsets.size());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(notes().size()));
}
BENCHMARK(BM_UnorderedSet)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
