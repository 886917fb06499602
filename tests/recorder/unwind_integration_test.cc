// Whole user stacks under the default options (-g cfi: unwound in the kernel
// from .eh_frame), on a program built here without frame pointers, with real
// BPF. One recording, four questions:
//   - a call chain main -> level1 -> level2 -> level3 built without frame
//     pointers: do its samples reach main?
//   - an app whose time goes into Debian's libc (qsort calling back, memcpy;
//     libc has no frame pointers): do samples taken inside libc get out of it?
//   - a thread: do its stacks go through start_thread to clone3?
//   - a thread blocked on a contended mutex: do its lock-wait and off-CPU
//     stacks (taken in the futex syscall, inside libc) reach its function?
// The program prints its own pid and thread ids; the frame-pointer mode on
// the same program is the control that shows the questions are not trivial.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/objfile/elf_test_files.h"
#include "tests/recorder/recorder_test_support.h"
#include "tests/workloads/workload_run.h"

namespace incise::testing {
namespace {

// The clock and the leaf function (level3: it spins until a given time) of
// the test programs below that burn CPU at the bottom of a known call chain.
constexpr const char* kSpinningLeaf = R"(
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}
volatile unsigned long sink;

__attribute__((noinline)) unsigned long level3(double until) {
  unsigned long x = 1;
  while (now() < until)
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
  return x;
}
)";

const std::string kProgram = std::string(R"(
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
)") + kSpinningLeaf + R"(
__attribute__((noinline)) unsigned long level2(double until) { return level3(until) * 3; }
__attribute__((noinline)) unsigned long level1(double until) { return level2(until) + 7; }

static int compare(const void* a, const void* b) {
  int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}
__attribute__((noinline)) unsigned long libc_heavy(double until) {
  static int values[50000];
  static char from[1 << 20], to[1 << 20];
  unsigned seed = 1;
  unsigned long sum = 0;
  while (now() < until) {
    for (int i = 0; i < 50000; ++i) values[i] = (seed = seed * 1103515245u + 12345u) >> 4;
    qsort(values, 50000, sizeof values[0], compare);
    for (int i = 0; i < 20; ++i) memcpy(to, from, sizeof from), from[i] ^= to[i + 1];
    sum += values[0] + to[7];
  }
  return sum;
}

static double thread_until;
__attribute__((noinline)) unsigned long thread_work(double until) { return level3(until) + 1; }
__attribute__((noinline)) void* worker(void* arg) {
  printf("worker_tid=%ld\n", (long)syscall(SYS_gettid));
  sink = thread_work(thread_until);
  return arg;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
// Rounds: main takes the lock, lets the waiter try (it blocks), holds the
// lock 50 ms and releases it. Handshakes spin on flags, not on futexes.
static volatile int round_go, round_done;
__attribute__((noinline)) void wait_for_lock(void) {
  pthread_mutex_lock(&lock);
  pthread_mutex_unlock(&lock);
}
__attribute__((noinline)) void* waiter(void* arg) {
  printf("waiter_tid=%ld\n", (long)syscall(SYS_gettid));
  fflush(stdout);
  for (int round = 1; round <= 8; ++round) {
    while (round_go != round) sched_yield();
    wait_for_lock();
    round_done = round;
  }
  return arg;
}

int main(void) {
  printf("pid=%d\n", getpid());
  fflush(stdout);
  double start = now();
  thread_until = start + 2.4;
  pthread_t thread, blocked;
  pthread_create(&thread, NULL, worker, NULL);
  sink = level1(start + 0.8);
  printf("chain_end_ns=%.0f\n", now() * 1e9);
  sink = libc_heavy(start + 1.6);
  printf("libc_end_ns=%.0f\n", now() * 1e9);
  pthread_create(&blocked, NULL, waiter, NULL);
  for (int round = 1; round <= 8; ++round) {
    pthread_mutex_lock(&lock);
    round_go = round;
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    pthread_mutex_unlock(&lock);
    while (round_done != round) sched_yield();
  }
  pthread_join(blocked, NULL);
  pthread_join(thread, NULL);
  fflush(stdout);
  return 0;
}
)";

class UnwindRecording {
 public:
  explicit UnwindRecording(const std::string& mode_flag) {
    exe_ = compileC(dir_, "no_frame_pointers", kProgram,
                    "-O2 -fomit-frame-pointer -fno-optimize-sibling-calls -pthread");
    path_ = tempTracePath("unwind-" + mode_flag + ".trace");
    std::vector<std::string> args = {"-o", path_, "-F", "999"};
    if (mode_flag != "default") args.insert(args.end(), {"-g", mode_flag});
    args.insert(args.end(), {"--", exe_});
    run_ = run_workload(INCISE_RECORD_BIN, args);
  }
  const WorkloadRun& run() const { return run_; }
  const std::string& path() const { return path_; }

 private:
  TempDir dir_;
  std::string exe_, path_;
  WorkloadRun run_;
};

// The user frames of a stack, symbolized from the trace alone, leaf first;
// frames in libc as "libc" (whether they are named depends on the symbol
// sources the recording host has: libc's .dynsym, or its debug file).
std::vector<std::string> userFunctions(TraceView& trace, uint32_t pid, uint64_t stack_id) {
  std::vector<std::string> names;
  const format::Metadata& meta = trace.reader().metadata();
  for (uint64_t frame : trace.reader().stacks().frames(stack_id)) {
    if (format::isKernelAddress(frame)) continue;
    std::string name;
    for (const auto& m : meta.mappings)
      if (m.pid == pid && m.start <= frame && frame < m.end &&
          m.path.find("/libc.so") != std::string::npos)
        name = "libc";
    if (name.empty()) name = trace.symbolize(pid, frame);
    names.push_back(name.empty() ? "?" : name);
  }
  return names;
}

// `callers` appear in this order (each deeper than the one before).
bool inOrder(const std::vector<std::string>& frames, const std::vector<std::string>& callers) {
  auto at = frames.begin();
  for (const std::string& name : callers) {
    at = std::find(at, frames.end(), name);
    if (at == frames.end()) return false;
  }
  return true;
}

struct Shares {
  int chain = 0, chain_whole = 0;        // main-thread samples in level3 / reaching main
  int libc_leaf = 0, libc_whole = 0;     // libc-phase samples with a libc leaf / reaching main
  int thread = 0, thread_whole = 0;      // worker-thread samples in level3 / through start_thread
  int waits = 0, waits_whole = 0;        // the waiter's futex waits / whose stack has waiter
  int switches = 0, switches_whole = 0;  // the waiter's blocking switches / whose stack has waiter
};

Shares measure(const UnwindRecording& recording) {
  Shares s;
  TraceView trace(recording.path());
  EXPECT_TRUE(trace.ok()) << trace.error();
  if (!trace.ok()) return s;
  const WorkloadRun& run = recording.run();
  auto pid = static_cast<uint32_t>(run.number("pid"));
  auto worker = static_cast<uint32_t>(run.number("worker_tid"));
  auto waiter = static_cast<uint32_t>(run.number("waiter_tid"));
  uint64_t chain_end = run.number("chain_end_ns"), libc_end = run.number("libc_end_ns");
  for (const auto& sample : trace.rows<format::CpuSample>()) {
    if (sample.pid != pid) continue;
    std::vector<std::string> frames = userFunctions(trace, pid, sample.stack_id);
    if (frames.empty()) continue;
    if (sample.tid == worker && frames.front() == "level3") {
      ++s.thread;
      // thread_work, worker, then start_thread and clone3 in libc, where it ends.
      auto at = std::find(frames.begin(), frames.end(), "worker");
      s.thread_whole += inOrder(frames, {"level3", "thread_work", "worker"}) &&
                        frames.end() - at >= 3 && frames.back() == "libc";
    } else if (sample.tid == pid && sample.time < chain_end && frames.front() == "level3") {
      ++s.chain;
      s.chain_whole += inOrder(frames, {"level3", "level2", "level1", "main"});
    } else if (sample.tid == pid && sample.time > chain_end && sample.time < libc_end &&
               frames.front() == "libc") {
      ++s.libc_leaf;
      s.libc_whole += inOrder(frames, {"libc", "libc_heavy", "main"});
    }
  }
  std::vector<std::pair<uint64_t, uint64_t>> waits;
  for (const auto& wait : trace.rows<format::LockInterval>()) {
    if (wait.tid != waiter || wait.stack_id == 0) continue;
    ++s.waits;
    s.waits_whole += inOrder(userFunctions(trace, pid, wait.stack_id), {"wait_for_lock", "waiter"});
    waits.emplace_back(wait.time, wait.acquired_time);
  }
  // The waiter's blocking switches inside those waits (not its other ones:
  // its printf, its exit).
  for (const auto& sw : trace.rows<format::SchedSwitch>()) {
    if (sw.prev_tid != waiter || sw.prev_state == 0 || sw.stack_id == 0) continue;
    bool in_wait = std::any_of(waits.begin(), waits.end(), [&](const auto& wait) {
      return sw.time >= wait.first && sw.time <= wait.second;
    });
    if (!in_wait) continue;
    ++s.switches;
    std::vector<std::string> frames = userFunctions(trace, pid, sw.stack_id);
    bool whole = inOrder(frames, {"wait_for_lock", "waiter"});
    s.switches_whole += whole;
    if (!whole) {
      std::string text;
      for (const auto& f : frames) text += f + ";";
      std::printf("off-CPU stack without its caller: %s\n", text.c_str());
    }
  }
  return s;
}

TEST(Unwind, DefaultStacksAreWholeWithoutFramePointers) {
  INCISE_REQUIRE_RECORDING();
  UnwindRecording recording("default");
  ASSERT_EQ(recording.run().exit_code, 0) << recording.run().raw_stdout;
  ASSERT_TRUE(recording.run().has("waiter_tid")) << recording.run().raw_stdout;
  Shares s = measure(recording);
  std::printf("default: chain %d/%d, libc leaf %d/%d, thread %d/%d, waits %d/%d, switches %d/%d\n",
              s.chain_whole, s.chain, s.libc_whole, s.libc_leaf, s.thread_whole, s.thread,
              s.waits_whole, s.waits, s.switches_whole, s.switches);
  // Enough of each to judge (the box may be busy: 0.8 s of CPU is ~800 samples).
  ASSERT_GE(s.chain, 50);
  ASSERT_GE(s.libc_leaf, 50);
  ASSERT_GE(s.thread, 50);
  ASSERT_GE(s.waits, 4);
  ASSERT_GE(s.switches, 4);
  EXPECT_GE(s.chain_whole, s.chain * 95 / 100);
  EXPECT_GE(s.libc_whole, s.libc_leaf * 95 / 100);
  EXPECT_GE(s.thread_whole, s.thread * 95 / 100);
  EXPECT_GE(s.waits_whole, s.waits * 95 / 100);
  EXPECT_GE(s.switches_whole, s.switches * 95 / 100);
}

// The control: frame-pointer walks of the same program are cut (the answer
// above is not something any walk gives).
TEST(Unwind, FramePointerStacksOfTheSameProgramAreCut) {
  INCISE_REQUIRE_RECORDING();
  UnwindRecording recording("fp");
  ASSERT_EQ(recording.run().exit_code, 0) << recording.run().raw_stdout;
  Shares s = measure(recording);
  std::printf("-g fp: chain %d/%d, libc leaf %d/%d, thread %d/%d, waits %d/%d, switches %d/%d\n",
              s.chain_whole, s.chain, s.libc_whole, s.libc_leaf, s.thread_whole, s.thread,
              s.waits_whole, s.waits, s.switches_whole, s.switches);
  EXPECT_LT(s.chain_whole + s.libc_whole + s.thread_whole, (s.chain + s.libc_leaf + s.thread) / 2);
}

// Forks that do not exec: each child's samples are walked by its parent's
// tables until the recorder has loaded its own, so even a child that lives
// 5 ms (a few samples, the first ones before any answer) has whole stacks.
const std::string kForkingProgram = std::string(R"(
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
)") + kSpinningLeaf + R"(
__attribute__((noinline)) unsigned long child_work(double until) { return level3(until) + 1; }
__attribute__((noinline)) unsigned long parent_work(double until) { return level3(until) + 2; }

int main(void) {
  printf("pid=%d\n", getpid());
  fflush(stdout);
  sink = parent_work(now() + 0.3);  // the parent's own samples load its tables
  for (int i = 0; i < 40; ++i) {
    pid_t child = fork();
    if (child == 0) {
      sink = child_work(now() + 0.005);
      _exit(0);
    }
    waitpid(child, NULL, 0);
  }
  return 0;
}
)";

TEST(Unwind, ForksThatDoNotExecAreWholeFromTheirFirstSample) {
  INCISE_REQUIRE_RECORDING();
  TempDir dir;
  std::string exe = compileC(dir, "forking", kForkingProgram,
                             "-O2 -fomit-frame-pointer -fno-optimize-sibling-calls");
  std::string path = dir.file("forks.trace");  // removed with the directory
  WorkloadRun run = run_workload(INCISE_RECORD_BIN, {"-o", path, "-F", "999", "--", exe});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  auto parent = static_cast<uint32_t>(run.number("pid"));
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  int samples = 0, whole = 0;
  for (const auto& sample : trace.rows<format::CpuSample>()) {
    if (sample.pid == parent) continue;
    std::vector<std::string> frames = userFunctions(trace, sample.pid, sample.stack_id);
    if (frames.empty() || frames.front() != "level3") continue;
    ++samples;
    whole += inOrder(frames, {"level3", "child_work", "main"});
  }
  std::printf("forks: %d/%d child samples reach main\n", whole, samples);
  ASSERT_GE(samples, 40);  // 200 ms of children at 999 Hz, on a busy box
  EXPECT_GE(whole, samples * 95 / 100);
}

// A custom lock probe on a function called millions of times: most samples
// land while the kernel handles a probe hit, many of them while the probed
// instruction's copy is single-stepped in the uprobe page, whose address has
// no tables. Walked from the probed code's address instead, they reach main.
constexpr const char* kProbedProgram = R"(
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}
volatile unsigned long sink;
__attribute__((noinline)) void my_acquire(void* lock) { sink += (unsigned long)lock; }
__attribute__((noinline)) void my_release(void* lock) { sink -= (unsigned long)lock; }
__attribute__((noinline)) void hot_loop(double until) {
  int lock;
  while (now() < until)
    for (int i = 0; i < 1000; ++i) my_acquire(&lock), my_release(&lock);
}
int main(void) {
  printf("pid=%d\n", getpid());
  fflush(stdout);
  hot_loop(now() + 1.0);
  return 0;
}
)";

TEST(Unwind, SamplesWhileAUprobeSingleStepsReachMain) {
  INCISE_REQUIRE_RECORDING();
  TempDir dir;
  std::string exe = compileC(dir, "probed", std::string("#include <unistd.h>\n") + kProbedProgram,
                             "-O2 -fomit-frame-pointer -fno-optimize-sibling-calls");
  std::string path = dir.file("probed.trace");
  WorkloadRun run = run_workload(INCISE_RECORD_BIN, {"-o", path, "-F", "999", "--lock-probe",
                                                     exe + ":my_acquire:my_release", "--", exe});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  auto pid = static_cast<uint32_t>(run.number("pid"));
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  int in_probe = 0, whole = 0;
  for (const auto& sample : trace.rows<format::CpuSample>()) {
    if (sample.pid != pid) continue;
    // In the kernel: the loop makes no syscalls (the clock is the vDSO's),
    // so that is a probe hit's handling (traps, the return probe's syscall).
    bool in_kernel = false;
    for (uint64_t frame : trace.reader().stacks().frames(sample.stack_id))
      in_kernel = in_kernel || format::isKernelAddress(frame);
    if (!in_kernel) continue;
    ++in_probe;
    whole += inOrder(userFunctions(trace, pid, sample.stack_id), {"hot_loop", "main"});
  }
  std::printf("probe handling: %d/%d samples reach main\n", whole, in_probe);
  ASSERT_GE(in_probe, 50);  // most of 1 s at 999 Hz, on a busy box
  // Samples in the uretprobe trampoline's syscall (the return probe) are cut.
  EXPECT_GE(whole, in_probe * 80 / 100);
}

// A whole-machine recording builds an object's rows when a walk first
// reaches it, once for every process that maps it: two processes of one
// binary (new to the recorder: built in this test) running when the
// recording starts. Their first walks through it are frame-pointer steps
// (counted in the notes); after that, their stacks are whole.
const std::string kTwinProgram = std::string(R"(
#include <stdio.h>
#include <unistd.h>
)") + kSpinningLeaf + R"(
__attribute__((noinline)) unsigned long level2(double until) { return level3(until) * 3; }
__attribute__((noinline)) unsigned long level1(double until) { return level2(until) + 7; }

int main(int argc, char** argv) {
  printf("pid_%s=%d\n", argc > 1 ? argv[1] : "x", getpid());
  fflush(stdout);
  sink = level1(now() + 5.0);
  return 0;
}
)";

TEST(Unwind, AWholeMachineRecordingBuildsAnObjectOnceWhenAWalkReachesIt) {
  INCISE_REQUIRE_RECORDING();
  TempDir dir;
  std::string exe =
      compileC(dir, "twin", kTwinProgram, "-O2 -fomit-frame-pointer -fno-optimize-sibling-calls");
  std::string path = dir.file("twins.trace"), log = dir.file("record.log");
  // Both twins run before the recorder starts and after it stops.
  std::string script = "'" + exe + "' a & '" + exe + "' b & sleep 0.3; '" +
                       std::string(INCISE_RECORD_BIN) + "' -a -F 999 -d 2 -v -o '" + path +
                       "' 2> '" + log + "'; status=$?; wait; exit $status";
  WorkloadRun run = run_workload("/bin/sh", {"-c", script});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout << readFile(log);
  auto a = static_cast<uint32_t>(run.number("pid_a")),
       b = static_cast<uint32_t>(run.number("pid_b"));
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::map<uint32_t, int> samples, whole;
  for (const auto& sample : trace.rows<format::CpuSample>()) {
    if (sample.pid != a && sample.pid != b) continue;
    std::vector<std::string> frames = userFunctions(trace, sample.pid, sample.stack_id);
    if (frames.empty() || frames.front() != "level3") continue;
    ++samples[sample.pid];
    whole[sample.pid] += inOrder(frames, {"level3", "level2", "level1", "main"});
  }
  std::printf("twins: %d/%d and %d/%d samples reach main\n", whole[a], samples[a], whole[b],
              samples[b]);
  // -v names every object whose rows are built: the twins' binary once.
  std::string text = readFile(log);
  size_t builds = 0;
  for (size_t at = text.find("unwind rows of " + exe + ":"); at != std::string::npos;
       at = text.find("unwind rows of " + exe + ":", at + 1))
    ++builds;
  EXPECT_EQ(builds, 1u) << text;
  bool counted = false;
  for (const std::string& note : trace.reader().metadata().notes)
    counted |= note.find("rows built when a walk first reached the object") != std::string::npos;
  EXPECT_TRUE(counted);
  // Enough of each to judge (two of the box's CPUs' worth for 2 s, shared).
  ASSERT_GE(samples[a], 50);
  ASSERT_GE(samples[b], 50);
  // Only the walks before the rows were in are cut.
  EXPECT_GE(whole[a], samples[a] * 80 / 100);
  EXPECT_GE(whole[b], samples[b] * 80 / 100);
}

}  // namespace
}  // namespace incise::testing
