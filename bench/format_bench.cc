// Trace-format benchmark on a realistic synthetic recording:
// 10 minutes of cpu-clock samples at 999 Hz on 2 CPUs (timer jitter of a few
// µs), stacks drawn Zipf-like from 2,000 distinct 20-frame stacks with
// realistic addresses, 8 threads in 2 processes, plus sched switches and
// lock intervals; the writer is flushed once per simulated second, as the
// recorder does.
//
// Counters:
//   bytes_per_sample  cpu-sample blocks + the whole stack table, per sample
//   events_per_s      writer throughput on one core (background = false)
//   rows_per_s        reader: time, tid and stack_id columns of every sample chunk
// Rates are per CPU-second of the benchmark thread (Google Benchmark's
// default), so a machine shared with other jobs does not skew them; the
// Time column still shows wall time.
//
//   build-format/bench/format_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

#include "format/reader.h"
#include "format/writer.h"

namespace incise::format {
namespace {

constexpr uint64_t kSeconds = 600;
constexpr uint64_t kHz = 999;
constexpr uint64_t kPeriodNs = 1'000'000'000 / kHz;
constexpr int kCpus = 2;
constexpr size_t kStacks = 2000;
constexpr size_t kFrames = 20;

struct Event {
  enum Type : uint8_t { kSample, kSwitch, kLock } type;
  uint64_t time;
  uint32_t cpu;
  uint32_t thread;  // index into kThreads
  uint32_t stack;   // index into stacks, for samples and locks
  uint64_t extra;   // switch: next thread; lock: hold ns
};

struct Workload {
  std::vector<std::vector<uint64_t>> stacks;
  std::vector<Event> events;  // in time order
  uint64_t samples = 0;
};

struct ThreadId {
  uint64_t pid, tid;
};
constexpr ThreadId kThreads[] = {{4211, 4211}, {4211, 4215}, {4211, 4216}, {4211, 4217},
                                 {4211, 4218}, {5120, 5120}, {5120, 5124}, {5120, 5125}};

// Return addresses of `count` functions inside an object mapped at `base`.
std::vector<uint64_t> functions(std::mt19937_64& rng, uint64_t base, uint64_t text_size,
                                int count) {
  std::vector<uint64_t> out;
  for (int i = 0; i < count; ++i) out.push_back(base + 0x1000 + rng() % text_size);
  return out;
}

Workload makeWorkload() {
  std::mt19937_64 rng(2024);
  Workload w;
  // Kernel frames leaf first, then user frames from the executable, libc and libstdc++.
  auto kernel = functions(rng, 0xffffffff81000000ull, 0x1200000, 400);
  auto exe = functions(rng, 0x55d4c2a00000ull, 0x200000, 600);
  auto libc = functions(rng, 0x7f3a1c228000ull, 0x170000, 300);
  auto libstdcxx = functions(rng, 0x7f3a1c4a0000ull, 0x120000, 200);
  // Stacks share their roots the way real call trees do: build each from a
  // few root chains plus a random suffix.
  std::vector<std::vector<uint64_t>> roots;
  for (int r = 0; r < 12; ++r) {
    std::vector<uint64_t> root;
    root.push_back(libc[rng() % 10]);  // __libc_start_main / start_thread
    for (int d = 0; d < 6; ++d) root.push_back(exe[rng() % 60]);
    roots.push_back(root);
  }
  for (size_t s = 0; s < kStacks; ++s) {
    std::vector<uint64_t> callee_first;
    size_t kernel_depth = rng() % 3 == 0 ? 4 + rng() % 5 : 0;
    for (size_t k = 0; k < kernel_depth; ++k) callee_first.push_back(kernel[rng() % kernel.size()]);
    while (callee_first.size() + 7 < kFrames) {
      uint64_t r = rng() % 10;
      callee_first.push_back(r < 6   ? exe[rng() % exe.size()]
                             : r < 8 ? libc[rng() % libc.size()]
                                     : libstdcxx[rng() % libstdcxx.size()]);
    }
    const auto& root = roots[rng() % roots.size()];
    callee_first.insert(callee_first.end(), root.rbegin(), root.rend());
    w.stacks.push_back(callee_first);
  }
  // Zipf-like popularity (s = 1.1).
  std::vector<double> weights(kStacks);
  for (size_t i = 0; i < kStacks; ++i) weights[i] = 1.0 / std::pow(double(i + 1), 1.1);
  std::discrete_distribution<uint32_t> pick_stack(weights.begin(), weights.end());
  std::normal_distribution<double> jitter(0.0, 2500.0);  // ns
  std::uniform_int_distribution<uint32_t> pick_thread(0, std::size(kThreads) - 1);

  uint64_t start = 1'000'000'000'000ull;
  uint64_t phase[kCpus] = {0, 371'113};
  uint32_t running[kCpus] = {0, 5};
  for (uint64_t tick = 0; tick < kSeconds * kHz; ++tick) {
    for (int cpu = 0; cpu < kCpus; ++cpu) {
      uint64_t t = start + tick * kPeriodNs + phase[cpu] +
                   static_cast<uint64_t>(std::max(0.0, 20000.0 + jitter(rng)));
      // Threads switch every few ms.
      if (rng() % 4 == 0) {
        uint32_t next = pick_thread(rng);
        w.events.push_back(
            Event{Event::kSwitch, t - 3000 - rng() % 100000, uint32_t(cpu), running[cpu], 0, next});
        running[cpu] = next;
      }
      w.events.push_back(Event{Event::kSample, t, uint32_t(cpu), running[cpu], pick_stack(rng), 0});
      ++w.samples;
      if (rng() % 3 == 0) {
        w.events.push_back(Event{Event::kLock, t - rng() % 200000, uint32_t(cpu), running[cpu],
                                 pick_stack(rng), 200 + rng() % 20000});
      }
    }
  }
  std::sort(w.events.begin(), w.events.end(),
            [](const Event& a, const Event& b) { return a.time < b.time; });
  return w;
}

const Workload& workload() {
  static const Workload w = makeWorkload();
  return w;
}

std::string tracePath() {
  return (std::filesystem::temp_directory_path() / "incise-format-bench.trace").string();
}

// Writes the workload; returns events appended.
uint64_t writeTrace(const std::string& path) {
  const Workload& w = workload();
  Header header;
  header.host = "bench";
  header.cpu_count = kCpus;
  auto writer = Writer::create(path, header, WriterOptions{.background = false});
  if (!writer) throw std::runtime_error(writer.error().message());
  uint64_t next_flush = w.events.front().time + 1'000'000'000;
  uint64_t appended = 0;
  for (const Event& e : w.events) {
    if (e.time >= next_flush) {
      if (!(*writer)->flush()) throw std::runtime_error("flush failed");
      next_flush += 1'000'000'000;
    }
    const ThreadId& th = kThreads[e.thread];
    switch (e.type) {
      case Event::kSample: {
        uint64_t id = (*writer)->internStack(w.stacks[e.stack]);
        (*writer)->append(CpuSample{.time = e.time,
                                    .cpu = e.cpu,
                                    .pid = th.pid,
                                    .tid = th.tid,
                                    .stack_id = id,
                                    .weight = kPeriodNs});
        break;
      }
      case Event::kSwitch: {
        const ThreadId& next = kThreads[e.extra];
        (*writer)->append(SchedSwitch{.time = e.time,
                                      .cpu = e.cpu,
                                      .prev_pid = th.pid,
                                      .prev_tid = th.tid,
                                      .prev_state = e.time % 3 ? 0u : 1u,
                                      .next_pid = next.pid,
                                      .next_tid = next.tid,
                                      .stack_id = 0});
        break;
      }
      case Event::kLock: {
        uint64_t id = (*writer)->internStack(w.stacks[e.stack]);
        (*writer)->append(LockInterval{.time = e.time,
                                       .acquired_time = e.time + e.extra / 4,
                                       .release_time = e.time + e.extra,
                                       .pid = th.pid,
                                       .tid = th.tid,
                                       .address = 0x55d4c2e04000ull + 64ull * (e.stack % 16),
                                       .lock_kind = 1,
                                       .flags = 0,
                                       .stack_id = id,
                                       .releaser_tid = 0});
        break;
      }
    }
    ++appended;
  }
  if (!(*writer)->close(w.events.back().time)) throw std::runtime_error("close failed");
  return appended;
}

void BM_Write(benchmark::State& state) {
  const Workload& w = workload();
  std::string path = tracePath();
  uint64_t events = 0;
  for (auto _ : state) events += writeTrace(path);
  state.counters["events_per_s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);

  auto reader = Reader::open(path);
  if (!reader) {
    state.SkipWithError(reader.error().message().c_str());
    return;
  }
  uint64_t sample_bytes = 0, stack_bytes = 0, file_bytes = std::filesystem::file_size(path);
  for (const auto& ref : (*reader)->blocks()) {
    uint64_t bytes = 24 + ref.length;
    if (ref.block_type == BlockType::kEventChunk && ref.kind == EventKind::kCpuSample) {
      sample_bytes += bytes;
    }
    if (ref.block_type == BlockType::kStackChunk) stack_bytes += bytes;
  }
  state.counters["samples"] = double(w.samples);
  state.counters["events"] = double(w.events.size());
  state.counters["bytes_per_sample"] = double(sample_bytes + stack_bytes) / double(w.samples);
  state.counters["stack_table_bytes"] = double(stack_bytes);
  state.counters["file_bytes_per_event"] = double(file_bytes) / double(w.events.size());
}
BENCHMARK(BM_Write)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ReadTimeTidStack(benchmark::State& state) {
  std::string path = tracePath();
  if (!std::filesystem::exists(path)) writeTrace(path);
  auto reader = Reader::open(path);
  if (!reader) {
    state.SkipWithError(reader.error().message().c_str());
    return;
  }
  auto refs = (*reader)->chunks(EventKind::kCpuSample);
  uint64_t rows = 0, checksum = 0;
  for (auto _ : state) {
    for (const auto& ref : refs) {
      auto chunk = (*reader)->readChunk(
          ref, {CpuSampleColumn::time, CpuSampleColumn::tid, CpuSampleColumn::stack_id});
      if (!chunk) {
        state.SkipWithError(chunk.error().message().c_str());
        return;
      }
      rows += chunk->rows();
      checksum += chunk->column(CpuSampleColumn::stack_id).back();
    }
  }
  benchmark::DoNotOptimize(checksum);
  state.counters["rows_per_s"] = benchmark::Counter(double(rows), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReadTimeTidStack)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace incise::format

BENCHMARK_MAIN();
