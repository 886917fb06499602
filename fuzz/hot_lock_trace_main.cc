// Writes a trace of at least SIZE_MB megabytes of one hot lock recorded in
// contended mode, as `incise-record` records a program whose threads queue
// on one mutex: THREADS workers take the lock in turn (first come, first
// served), each wait a futex row [request, wake) with the releaser and a
// wake-up row from it, holders sometimes preempted or faulting inside, CPU
// samples at 999 Hz on two CPUs. With JOIN = 1 the main thread also waits
// on one futex from the start to the end, woken by worker 1 (a
// pthread_join as contended mode records it). For measuring the lock
// reports' time and memory on a hot lock.
//
//   incise_hot_lock_trace OUT.trace SIZE_MB [THREADS [JOIN [SEED]]]
//   example: incise_hot_lock_trace /var/tmp/hot.trace 100 8 0
#include <sys/stat.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "format/writer.h"

namespace {

using namespace incise;

constexpr uint32_t kPid = 4000;
constexpr uint64_t kTextStart = 0x400000;
constexpr uint64_t kFunctionBytes = 256;
constexpr uint64_t kLock = 0x7f0000001040;
constexpr uint64_t kJoinWord = 0x7f0000fff990;
const std::vector<std::string> kFunctions = {"main",
                                             "worker_main",
                                             "update_account",
                                             "pthread_mutex_lock",
                                             "__lll_lock_wait",
                                             "pthread_mutex_unlock",
                                             "critical_work",
                                             "touch_fresh_pages",
                                             "outside_work",
                                             "pthread_join"};

// The C library's functions among them: their frames are in libc.so.6, as
// a real program's are, so the waits classify as mutex waits and joins.
constexpr uint64_t kLibcStart = 0x7f2000000000;
bool inLibc(size_t function) {
  return kFunctions[function].starts_with("pthread_") || kFunctions[function].starts_with("__");
}

uint64_t frame(size_t function) {
  return (inLibc(function) ? kLibcStart : kTextStart) + function * kFunctionBytes + 16;
}

format::ObjectSymbols objectOf(bool libc) {
  format::ObjectSymbols object;
  object.path = libc ? "/usr/lib/x86_64-linux-gnu/libc.so.6" : "/usr/bin/hotlock";
  object.build_id = libc ? "hot-lock-libc" : "hot-lock-app";
  uint64_t size = kFunctions.size() * kFunctionBytes;
  object.segments = {{libc ? kLibcStart : kTextStart, 0, size, size, 5}};
  for (size_t f = 0; f < kFunctions.size(); ++f) {
    if (inLibc(f) == libc) object.symbols.push_back({frame(f) - 16, kFunctionBytes, kFunctions[f]});
  }
  return object;
}

format::MetadataDelta describe(uint32_t threads) {
  format::MetadataDelta d;
  uint64_t size = kFunctions.size() * kFunctionBytes;
  for (bool libc : {false, true}) {
    format::ObjectSymbols object = objectOf(libc);
    uint64_t start = object.segments.front().vaddr;
    d.mappings.push_back({kPid, start, start + size, 0, object.path, object.build_id, 5, 0});
    d.objects.push_back(std::move(object));
  }
  d.processes.push_back({kPid, 1, "hotlock", {"/usr/bin/hotlock"}, 0});
  d.threads.push_back({kPid, kPid, "hotlock", 0});
  for (uint32_t t = 1; t <= threads; ++t) {
    d.threads.push_back({kPid + t, kPid, "worker-" + std::to_string(t), 0});
  }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: incise_hot_lock_trace OUT.trace SIZE_MB [THREADS [JOIN [SEED]]]\n"
                 "  THREADS workers (default 8) queue on one mutex, recorded in contended mode;\n"
                 "  JOIN = 1: the main thread also waits on one futex for the whole trace\n"
                 "  example: incise_hot_lock_trace /var/tmp/hot.trace 100 8 0\n";
    return 2;
  }
  const std::string path = argv[1];
  const uint64_t target_bytes = std::strtoull(argv[2], nullptr, 10) << 20;
  const uint32_t threads = argc > 3 ? static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10)) : 8;
  const bool join = argc > 4 && std::strtoul(argv[4], nullptr, 10) != 0;
  std::mt19937_64 rng(argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 1);
  if (target_bytes == 0 || threads < 2 || threads > 1000) {
    std::cerr << "incise_hot_lock_trace: SIZE_MB must be positive, THREADS 2..1000\n";
    return 2;
  }

  format::Header header;
  header.host = "hot-lock-trace";
  header.command_line = {"incise_hot_lock_trace", argv[1], argv[2]};
  header.options.sample_frequency_hz = 999;
  header.options.sched_enabled = true;
  header.options.page_faults_enabled = true;
  header.options.lock_mode = "contended";
  header.cpu_count = 2;
  header.page_size = 4096;
  auto writer = format::Writer::create(path, header);
  if (!writer) {
    std::cerr << "incise_hot_lock_trace: " << writer.error().message() << "\n";
    return 1;
  }
  format::Writer& w = **writer;
  w.addMetadata(describe(threads));
  auto stack = [&](std::vector<size_t> functions) {
    std::vector<uint64_t> frames;
    for (size_t f : functions) frames.push_back(frame(f));
    return w.internStack(frames);
  };
  const uint64_t wait_stack = stack({4, 3, 2, 1});  // __lll_lock_wait <- ... <- worker_main
  const uint64_t wake_stack = stack({5, 2, 1});     // pthread_mutex_unlock <- update_account
  const uint64_t inside_stack = stack({6, 2, 1});
  const uint64_t fault_stack = stack({7, 2, 1});
  const uint64_t outside_stack = stack({8, 1});
  const uint64_t join_stack = stack({9, 0});

  const uint64_t start = 1'000'000;
  std::vector<uint64_t> next_request(threads + 1, start);
  for (uint32_t t = 1; t <= threads; ++t) next_request[t] = start + rng() % 20'000;
  uint64_t free_at = start, last_holder = 0, next_sample = start, sections = 0;
  while (true) {
    for (int i = 0; i < 20000; ++i) {
      // First come, first served: the earliest request gets the lock next.
      uint32_t holder = 1;
      for (uint32_t t = 2; t <= threads; ++t) {
        if (next_request[t] < next_request[holder]) holder = t;
      }
      uint64_t request = next_request[holder];
      uint64_t acquired = std::max(request, free_at);
      uint32_t tid = kPid + holder;
      if (request < acquired && last_holder != 0) {
        w.append(format::LockInterval{.time = request,
                                      .acquired_time = acquired,
                                      .pid = kPid,
                                      .tid = tid,
                                      .address = kLock,
                                      .lock_kind = static_cast<uint64_t>(format::LockKind::kFutex),
                                      .flags = format::kLockContended | format::kLockContendedOnly,
                                      .stack_id = wait_stack,
                                      .releaser_tid = last_holder});
        w.append(format::Wakeup{.time = acquired,
                                .cpu = rng() % 2,
                                .target_cpu = rng() % 2,
                                .waker_pid = kPid,
                                .waker_tid = last_holder,
                                .wakee_pid = kPid,
                                .wakee_tid = tid,
                                .stack_id = wake_stack});
      }
      uint64_t release = acquired + 2'000 + rng() % 40'000;
      if (rng() % 10 == 0) {
        w.append(format::PageFault{.time = acquired + 1'000,
                                   .cpu = rng() % 2,
                                   .pid = kPid,
                                   .tid = tid,
                                   .address = 0x7f1000000000 + sections * 4096,
                                   .stack_id = fault_stack});
      }
      if (rng() % 30 == 0) {  // preempted inside: the others keep waiting
        uint64_t out = acquired + 1'500, back = out + 100'000 + rng() % 2'000'000;
        uint32_t other = kPid + threads + 1;  // a thread outside the program
        w.append(format::SchedSwitch{.time = out,
                                     .cpu = 0,
                                     .prev_pid = kPid,
                                     .prev_tid = tid,
                                     .prev_state = 0,
                                     .next_pid = other,
                                     .next_tid = other,
                                     .stack_id = inside_stack});
        w.append(format::SchedSwitch{.time = back,
                                     .cpu = 0,
                                     .prev_pid = other,
                                     .prev_tid = other,
                                     .prev_state = 0,
                                     .next_pid = kPid,
                                     .next_tid = tid});
        release += back - out;
      }
      for (; next_sample < release; next_sample += 1'001'001) {
        uint32_t sampled = 1 + static_cast<uint32_t>(rng() % threads);
        w.append(format::CpuSample{.time = next_sample,
                                   .cpu = rng() % 2,
                                   .pid = kPid,
                                   .tid = kPid + sampled,
                                   .stack_id = sampled == holder ? inside_stack : outside_stack,
                                   .weight = 1001001});
      }
      free_at = release;
      last_holder = tid;
      next_request[holder] = release + 5'000 + rng() % 40'000;
      ++sections;
    }
    Status flushed = w.flush();
    if (!flushed) {
      std::cerr << "incise_hot_lock_trace: " << flushed.message() << "\n";
      return 1;
    }
    if (w.stats().bytes_written >= target_bytes) break;
  }
  if (join) {
    w.append(format::LockInterval{.time = start,
                                  .acquired_time = free_at,
                                  .pid = kPid,
                                  .tid = kPid,
                                  .address = kJoinWord,
                                  .lock_kind = static_cast<uint64_t>(format::LockKind::kFutex),
                                  .flags = format::kLockContended | format::kLockContendedOnly,
                                  .stack_id = join_stack,
                                  .releaser_tid = kPid + 1});
    w.append(format::Wakeup{.time = free_at,
                            .waker_pid = kPid,
                            .waker_tid = kPid + 1,
                            .wakee_pid = kPid,
                            .wakee_tid = kPid});
  }
  Status closed = w.close(free_at + 1);
  if (!closed) {
    std::cerr << "incise_hot_lock_trace: " << closed.message() << "\n";
    return 1;
  }
  std::cout << path << ": " << sections << " sections, " << (w.stats().bytes_written >> 20)
            << " MB\n";
  return 0;
}
