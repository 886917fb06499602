// What applying the kernel's mmap records costs the recorder per record
// (MmapRecordFeed into a MappingTable, the recorder's work for each record
// it drains): batches shaped like one process start — a fork, an exec and
// the executable mappings of a small C++ program (itself, ld.so, the vDSO,
// libstdc++, libm, libgcc_s, libc), with build-ids as 6.18 sends them —
// for a new pid each time, each process exiting and being forgotten later,
// as on a box where processes come and go.
//
//   build/bench/mapping_feed_bench
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <vector>

#include "recorder/metadata/mapping_table.h"
#include "recorder/metadata/mmap_record_feed.h"

namespace {

using incise::recorder::KernelRecord;

std::vector<KernelRecord> processStart(uint32_t parent, uint32_t pid, uint64_t time) {
  std::vector<KernelRecord> batch;
  batch.push_back(
      {.kind = KernelRecord::kFork, .time = time, .pid = pid, .tid = pid, .parent_pid = parent});
  batch.push_back({.kind = KernelRecord::kExec, .time = time + 10, .pid = pid, .tid = pid});
  const char* paths[] = {"/usr/local/bin/short-program",
                         "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
                         "[vdso]",
                         "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30",
                         "/usr/lib/x86_64-linux-gnu/libm.so.6",
                         "/usr/lib/x86_64-linux-gnu/libgcc_s.so.1",
                         "/usr/lib/x86_64-linux-gnu/libc.so.6"};
  uint64_t start = 0x7f0000000000;
  uint8_t id = 0;
  for (const char* path : paths) {
    KernelRecord m{.kind = KernelRecord::kMmap, .time = time + 20 + id, .pid = pid, .tid = pid};
    m.start = start;
    m.length = 0x100000;
    m.file_offset = 0x1000;
    m.prot = PROT_READ | PROT_EXEC;
    m.path = path;
    if (path[0] == '/') m.build_id = std::string(20, static_cast<char>(++id));
    batch.push_back(std::move(m));
    start += 0x200000;
  }
  return batch;
}

void BM_ProcessStart(benchmark::State& state) {
  incise::recorder::MappingTable table;
  incise::recorder::MmapRecordFeed feed(table);
  uint32_t pid = 1000;
  uint64_t time = 1'000'000;
  const std::vector<KernelRecord> shape = processStart(1, 0, 0);
  size_t records = 0;
  for (auto _ : state) {
    std::vector<KernelRecord> batch = processStart(1, ++pid, time);  // decode allocates the same
    records += batch.size();
    feed.apply(batch);
    table.exit(pid, time + 1'000);
    time += 10'000;
    if (pid % 256 == 0) table.forgetExited(time + incise::recorder::MappingTable::kRetentionNs);
  }
  state.counters["records"] =
      benchmark::Counter(static_cast<double>(records), benchmark::Counter::kIsRate);
  state.SetItemsProcessed(static_cast<int64_t>(records));
  benchmark::DoNotOptimize(shape);
}
BENCHMARK(BM_ProcessStart);

}  // namespace

BENCHMARK_MAIN();
