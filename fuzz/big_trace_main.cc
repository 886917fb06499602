// Writes a trace of at least SIZE_MB megabytes of realistic-looking CPU
// samples, scheduler switches and lock intervals (many threads, distinct
// stacks and locks, with embedded symbols so reports resolve names), for
// measuring the analyzer's memory on large files.
//
//   incise_big_trace OUT.trace SIZE_MB [SEED]
//   example: incise_big_trace /var/tmp/big.trace 1100
#include <sys/stat.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "format/writer.h"

namespace {

using namespace incise;

constexpr uint32_t kProcesses = 50;
constexpr uint32_t kThreadsPerProcess = 20;
constexpr uint32_t kFunctions = 4000;
constexpr uint32_t kDistinctStacks = 50000;
constexpr uint32_t kMaxDepth = 24;
constexpr uint64_t kTextStart = 0x400000;
constexpr uint64_t kFunctionBytes = 256;
constexpr uint64_t kKernelStart = 0xffffffff81000000;
constexpr uint32_t kLocks = 1000;
constexpr uint64_t kLockArea = 0x7f0000001000;

format::MetadataDelta describeProcesses(uint64_t time) {
  format::MetadataDelta d;
  d.time = time;
  format::ObjectSymbols object;
  object.path = "/usr/bin/bigapp";
  object.build_id = "big-trace-app";
  object.segments = {{kTextStart, 0, kFunctions * kFunctionBytes, kFunctions * kFunctionBytes, 5}};
  for (uint32_t f = 0; f < kFunctions; ++f) {
    object.symbols.push_back(
        {kTextStart + f * kFunctionBytes, kFunctionBytes, "function_" + std::to_string(f)});
  }
  d.objects.push_back(std::move(object));
  for (uint32_t f = 0; f < 200; ++f) {
    d.kernel_symbols.push_back({kKernelStart + f * 4096, "kernel_fn_" + std::to_string(f), ""});
  }
  for (uint32_t p = 0; p < kProcesses; ++p) {
    uint32_t pid = 1000 + p * 100;
    d.processes.push_back({pid, 1, "bigapp", {"/usr/bin/bigapp", std::to_string(p)}, time});
    d.mappings.push_back({pid, kTextStart, kTextStart + kFunctions * kFunctionBytes, 0,
                          "/usr/bin/bigapp", "big-trace-app", 5, time});
    for (uint32_t t = 0; t < kThreadsPerProcess; ++t) {
      d.threads.push_back({pid + t, pid, "worker-" + std::to_string(t), time});
    }
  }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: incise_big_trace OUT.trace SIZE_MB [SEED [LOCKS]]\n"
                 "  LOCKS: locks per process, each always taken at its own site (a program's\n"
                 "  few locks); default: 1000 locks per process taken at random sites\n"
                 "  example: incise_big_trace /var/tmp/big.trace 1100\n";
    return 2;
  }
  const std::string path = argv[1];
  const uint64_t target_bytes = std::strtoull(argv[2], nullptr, 10) << 20;
  std::mt19937_64 rng(argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1);
  const uint64_t locks_at_own_site = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 0;
  if (target_bytes == 0) {
    std::cerr << "incise_big_trace: SIZE_MB must be positive\n";
    return 2;
  }

  format::Header header;
  header.host = "big-trace";
  header.command_line = {"incise_big_trace", argv[1], argv[2]};
  header.options.sample_frequency_hz = 999;
  header.options.sched_enabled = true;
  header.options.lock_mode = "all";
  header.cpu_count = 2;
  header.page_size = 4096;
  auto writer = format::Writer::create(path, header);
  if (!writer) {
    std::cerr << "incise_big_trace: " << writer.error().message() << "\n";
    return 1;
  }
  format::Writer& w = **writer;
  w.addMetadata(describeProcesses(0));

  // Stacks: a few kernel frames, then user frames walking down from main.
  std::vector<std::vector<uint64_t>> stacks(kDistinctStacks);
  for (auto& frames : stacks) {
    size_t kernel = rng() % 4;
    size_t depth = 2 + rng() % kMaxDepth;
    for (size_t i = 0; i < kernel; ++i) frames.push_back(kKernelStart + (rng() % 200) * 4096 + 8);
    for (size_t i = 0; i < depth; ++i) {
      frames.push_back(kTextStart + (rng() % kFunctions) * kFunctionBytes + rng() % kFunctionBytes);
    }
  }
  uint64_t time = 1'000'000;
  uint64_t rows = 0;
  while (true) {
    for (int i = 0; i < 100000; ++i) {
      uint32_t pid = 1000 + static_cast<uint32_t>(rng() % kProcesses) * 100;
      uint32_t tid = pid + static_cast<uint32_t>(rng() % kThreadsPerProcess);
      // Zipf-ish: low stack numbers are hot, as in a real profile.
      uint64_t pick = rng() % kDistinctStacks;
      pick = pick * (rng() % kDistinctStacks) / kDistinctStacks;
      uint64_t stack = w.internStack(stacks[pick]);
      uint64_t cpu = rng() % 2;
      time += 1 + rng() % 1000000;
      w.append(format::CpuSample{
          .time = time, .cpu = cpu, .pid = pid, .tid = tid, .stack_id = stack, .weight = 1001001});
      if (i % 4 == 0) {
        uint32_t next = 1000 + static_cast<uint32_t>(rng() % kProcesses) * 100;
        w.append(format::SchedSwitch{.time = time + 1,
                                     .cpu = cpu,
                                     .prev_pid = pid,
                                     .prev_tid = tid,
                                     .prev_state = rng() % 3,
                                     .next_pid = next,
                                     .next_tid = next + rng() % kThreadsPerProcess,
                                     .stack_id = stack});
        ++rows;
      }
      if (i % 8 == 0) {
        const uint64_t wait = rng() % 2 ? 0 : rng() % 100000;
        // The default draws its lock where it always did, so its traces stay the same.
        uint64_t own_lock = 0, lock_stack = stack;
        if (locks_at_own_site != 0) {
          own_lock = rng() % locks_at_own_site;
          lock_stack = w.internStack(stacks[own_lock]);
        }
        w.append(format::LockInterval{
            .time = time,
            .acquired_time = time + wait,
            .release_time = time + wait + 1 + rng() % 50000,
            .pid = pid,
            .tid = tid,
            .address = kLockArea + (locks_at_own_site ? own_lock : rng() % kLocks) * 64,
            .lock_kind = static_cast<uint64_t>(format::LockKind::kMutex),
            .flags = wait ? uint64_t{format::kLockContended} : 0,
            .stack_id = lock_stack,
            .releaser_tid = wait ? pid + static_cast<uint32_t>(rng() % kThreadsPerProcess) : 0});
        ++rows;
      }
      ++rows;
    }
    Status flushed = w.flush();
    if (!flushed) {
      std::cerr << "incise_big_trace: " << flushed.message() << "\n";
      return 1;
    }
    if (w.stats().bytes_written >= target_bytes) break;
  }
  Status closed = w.close(time + 1);
  if (!closed) {
    std::cerr << "incise_big_trace: " << closed.message() << "\n";
    return 1;
  }
  std::cout << path << ": " << rows << " rows, " << (w.stats().bytes_written >> 20) << " MB\n";
  return 0;
}
