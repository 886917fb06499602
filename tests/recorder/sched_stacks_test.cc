// Which stacks the scheduler's switch rows carry (--sched-stacks): an
// interruptible block (a sleep) gets its user stack only by default, and
// its kernel stack too with --sched-stacks all. Records the bundled sleeper
// with real BPF. And which blocks get switch rows at all (--sched-min-block).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bpf/wait_stack.h"
#include "format/event_kinds.h"
#include "tests/recorder/locks_recording.h"

namespace incise::testing {
namespace {

const std::string kSleeper = INCISE_WORKLOADS_DIR "/sleeper";

struct BlockStacks {
  uint64_t blocks = 0;
  uint64_t with_user = 0;
  uint64_t with_kernel = 0;
};

// include/linux/sched.h: a block in TASK_UNINTERRUPTIBLE (a page cache fault,
// the mmap lock under memory pressure) gets its kernel stack by default.
constexpr uint64_t kTaskUninterruptible = 0x2;

enum class Blocks { kInterruptible, kAll };

BlockStacks sleeperBlocks(const std::vector<std::string>& options, Blocks which) {
  Recording run =
      record(options, {kSleeper, "--count", "10", "--interval-ms", "5", "--pipe-ms", "0"});
  RemoveOnExit cleanup{run.trace_path};
  EXPECT_EQ(run.exit_code, 0) << run.recorder_stderr;
  TraceView trace(run.trace_path);
  EXPECT_TRUE(trace.ok()) << trace.error();
  BlockStacks result;
  if (!trace.ok()) return result;
  uint64_t tid = run.value("tid");
  for (const format::SchedSwitch& s : trace.rows<format::SchedSwitch>()) {
    if (s.prev_tid != tid || s.prev_state == 0 || s.stack_id == 0) continue;
    if (which == Blocks::kInterruptible && (s.prev_state & kTaskUninterruptible) != 0) continue;
    ++result.blocks;
    bool user = false, kernel = false;
    for (uint64_t frame : trace.reader().stacks().frames(s.stack_id))
      (format::isKernelAddress(frame) ? kernel : user) = true;
    result.with_user += user;
    result.with_kernel += kernel;
  }
  return result;
}

TEST(SchedStacks, AnInterruptibleBlockGetsItsUserStackOnly) {
  INCISE_REQUIRE_RECORDING();
  BlockStacks blocked = sleeperBlocks({"-F", "19", "--locks", "off"}, Blocks::kInterruptible);
  ASSERT_GE(blocked.blocks, 10u);
  EXPECT_EQ(blocked.with_user, blocked.blocks);
  EXPECT_EQ(blocked.with_kernel, 0u);
}

TEST(SchedStacks, AllWalksTheKernelStackOfEveryBlockToo) {
  INCISE_REQUIRE_RECORDING();
  BlockStacks blocked =
      sleeperBlocks({"-F", "19", "--locks", "off", "--sched-stacks", "all"}, Blocks::kAll);
  ASSERT_GE(blocked.blocks, 10u);
  EXPECT_EQ(blocked.with_kernel, blocked.blocks);
  EXPECT_EQ(blocked.with_user, blocked.blocks);
}

// The first number of the recorder's note that contains `words`.
uint64_t noteNumber(TraceView& trace, const std::string& words) {
  const std::string kPrefix = "scheduler: ";
  for (const std::string& note : trace.reader().metadata().notes)
    if (note.rfind(kPrefix, 0) == 0 && note.find(words) != std::string::npos)
      return std::strtoull(note.c_str() + kPrefix.size(), nullptr, 10);
  return 0;
}

// A thread that blocks at one place again and again: the first block's user
// stack is walked, the later ones reuse its frames, and all of them are the
// same stack (interned frames: equal ids are equal frames). The blocks
// before the process's unwind tables are in are frame-pointer walks, and
// some early walks lose the frames between clock_nanosleep and main; those
// are never reused, and how many there are depends on the box's load,
// hence the low bounds.
TEST(SchedStacks, BlocksAtOnePlaceReuseTheFirstWalk) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record({"-F", "19", "--locks", "off", "--sched-min-block", "0"},
                         {kSleeper, "--count", "100", "--interval-ms", "2", "--pipe-ms", "0"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_EQ(run.value("nanosleep_calls"), 100u);
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::map<uint64_t, uint64_t> sleeps_by_stack;
  for (const format::SchedSwitch& s : trace.rows<format::SchedSwitch>()) {
    if (s.prev_tid != run.value("tid") || s.prev_state == 0 || s.stack_id == 0) continue;
    if (trace.stackHasFunction(run.value("pid"), s.stack_id, "sleep_in_nanosleep"))
      ++sleeps_by_stack[s.stack_id];
  }
  ASSERT_EQ(sleeps_by_stack.size(), 1u);
  EXPECT_GE(sleeps_by_stack.begin()->second, 50u);
  EXPECT_GE(noteNumber(trace, "user stacks reused"), 10u);
}

// Twice as many threads as may hold a memo at a time, a batch after
// another: each exiting thread gives its memo back, so every thread's later
// sleeps reuse its first walk. Were memos kept past their threads' exits,
// the second half of the threads would walk every time, and at most half
// their sleeps, plus the other blocks' reuses, could be reused.
TEST(SchedStacks, ExitedThreadsGiveTheirMemoBack) {
  INCISE_REQUIRE_RECORDING();
  const uint64_t threads = 2 * uint64_t{WAIT_STACK_MEMO_THREADS};
  const uint64_t sleeps_per_thread = 10;
  Recording run =
      record({"-F", "19", "--locks", "off", "--sched-min-block", "0"},
             {kSleeper, "--count", "0", "--pipe-ms", "0", "--threads", std::to_string(threads),
              "--thread-sleeps", std::to_string(sleeps_per_thread)});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_EQ(run.value("thread_sleeps"), threads * sleeps_per_thread);
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  // Each thread's first sleep is walked and the nine after it reused; some
  // early threads walk by frame pointers before the tables are in.
  EXPECT_GE(noteNumber(trace, "user stacks reused"), threads * (sleeps_per_thread - 1) * 3 / 4);
}

// The recorded thread's uninterruptible blocks that have a stack (and, unless
// `function` is empty, that function in it), counted per kernel frames.
std::map<std::vector<uint64_t>, uint64_t> uninterruptibleBlocksByKernelFrames(
    TraceView& trace, const Recording& run, const std::string& function) {
  std::map<std::vector<uint64_t>, uint64_t> blocks;
  for (const format::SchedSwitch& s : trace.rows<format::SchedSwitch>()) {
    if (s.prev_tid != run.value("tid") || (s.prev_state & kTaskUninterruptible) == 0 ||
        s.stack_id == 0)
      continue;
    if (!function.empty() && !trace.stackHasFunction(run.value("pid"), s.stack_id, function))
      continue;
    std::vector<uint64_t> kernel;
    for (uint64_t frame : trace.reader().stacks().frames(s.stack_id))
      if (format::isKernelAddress(frame)) kernel.push_back(frame);
    ++blocks[kernel];
  }
  return blocks;
}

uint64_t blockCount(const std::map<std::vector<uint64_t>, uint64_t>& blocks_by_frames) {
  uint64_t blocks = 0;
  for (const auto& [frames, count] : blocks_by_frames) blocks += count;
  return blocks;
}

// A thread that blocks uninterruptibly at one kernel place again and again
// (a vfork parent waiting for its child): every block has its kernel stack,
// the later ones reuse the first walk's frames, and all of them are the same
// kernel frames (the user part is walked on its own: the first blocks'
// frame-pointer walks differ from the later CFI ones). Each vfork is a
// syscall of its own, so its kernel frames sit at a new random offset. The
// thread's few other uninterruptible blocks (exec, page faults at start)
// are the rest.
TEST(SchedStacks, UninterruptibleBlocksAtOnePlaceReuseTheFirstKernelWalk) {
  INCISE_REQUIRE_RECORDING();
  Recording run =
      record({"-F", "19", "--locks", "off", "--sched-min-block", "0"},
             {kSleeper, "--vforks", "300", "--count", "1", "--interval-ms", "1", "--pipe-ms", "0"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_EQ(run.value("vfork_calls"), 300u);
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::map<std::vector<uint64_t>, uint64_t> blocks_by_kernel_frames =
      uninterruptibleBlocksByKernelFrames(trace, run, "");
  uint64_t blocks = blockCount(blocks_by_kernel_frames);
  // Most vforks block (the child rarely exits before the parent waits).
  ASSERT_GE(blocks, 100u);
  EXPECT_EQ(blocks_by_kernel_frames.count({}), 0u);
  uint64_t most = 0;
  for (const auto& [frames, count] : blocks_by_kernel_frames) most = std::max(most, count);
  EXPECT_GE(most * 10, blocks * 9);
  EXPECT_GE(noteNumber(trace, "kernel stacks of blocks reused"), blocks / 2);
}

// The number just before `words` in the recorder's note that contains `about`.
uint64_t noteNumberBefore(TraceView& trace, const std::string& about, const std::string& words) {
  for (const std::string& note : trace.reader().metadata().notes) {
    size_t at = note.find(words);
    if (note.rfind("scheduler: ", 0) != 0 || note.find(about) == std::string::npos ||
        at == std::string::npos || at < 2)
      continue;
    size_t start = note.find_last_not_of("0123456789", at - 2);
    return std::strtoull(note.c_str() + (start == std::string::npos ? 0 : start + 1), nullptr, 10);
  }
  return 0;
}

// A thread that blocks uninterruptibly at one user place on a few kernel
// paths in turn (fdatasync: the page's writeback, the journal, the disk's
// flush), a syscall of its own each time with other syscalls (the page's
// write) between: each path is walked about once and then reused, every
// block keeps its kernel stack, and those stacks are the few paths. The
// frames under a syscall's entry are found from the deepest up; found from
// the entry down, they were often stale copies in the random offset's
// padding, and a quarter to two thirds of these blocks were walked again.
TEST(SchedStacks, UninterruptibleBlocksOnAFewPathsInTurnReuseTheirWalks) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record(
      {"-F", "19", "--locks", "off", "--sched-min-block", "0"},
      {kSleeper, "--fdatasyncs", "300", "--count", "1", "--interval-ms", "1", "--pipe-ms", "0"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_EQ(run.value("fdatasync_calls"), 300u);
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::map<std::vector<uint64_t>, uint64_t> blocks_by_kernel_frames =
      uninterruptibleBlocksByKernelFrames(trace, run, "block_in_fdatasync");
  uint64_t blocks = blockCount(blocks_by_kernel_frames);
  // Most fdatasyncs block (a disk's flush takes longer than the syscall's path to it).
  ASSERT_GE(blocks, 150u);
  EXPECT_EQ(blocks_by_kernel_frames.count({}), 0u);
  std::vector<uint64_t> counts;
  for (const auto& [frames, count] : blocks_by_kernel_frames) counts.push_back(count);
  std::sort(counts.rbegin(), counts.rend());
  uint64_t on_four_paths = 0;
  for (size_t i = 0; i < counts.size() && i < 4; ++i) on_four_paths += counts[i];
  EXPECT_GE(on_four_paths * 10, blocks * 9);
  uint64_t reused = noteNumber(trace, "kernel stacks of blocks reused");
  uint64_t walked = noteNumberBefore(trace, "kernel stacks of blocks", " walked and kept, ");
  EXPECT_GE(reused, blocks / 2);
  EXPECT_LE(walked * 5, reused + walked) << "reused " << reused << ", walked " << walked;
}

// A wake-up that ends a block already longer than --sched-min-block keeps
// its waker's stack (the pipe's writer thread, in write()).
TEST(SchedMinBlock, TheWakeUpOfALongBlockKeepsItsWakersStack) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record({"-F", "19", "--locks", "off", "--sched-min-block", "20000"},
                         {kSleeper, "--count", "5", "--interval-ms", "1", "--pipe-ms", "100"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  uint64_t wakeups = 0, with_stack = 0;
  for (const format::Wakeup& w : trace.rows<format::Wakeup>()) {
    if (w.wakee_tid != run.value("tid") || w.waker_tid != run.value("writer_tid")) continue;
    ++wakeups;
    with_stack += w.stack_id != 0;
  }
  EXPECT_GE(wakeups, 1u);
  EXPECT_EQ(with_stack, wakeups);
}

// The off-CPU intervals the recorder's note says it did not write.
uint64_t shortBlocksNoted(TraceView& trace) {
  const std::string kPrefix = "scheduler: ";
  for (const std::string& note : trace.reader().metadata().notes)
    if (note.rfind(kPrefix, 0) == 0 && note.find("not written") != std::string::npos)
      return std::strtoull(note.c_str() + kPrefix.size(), nullptr, 10);
  return 0;
}

struct SleeperSwitches {
  uint64_t nanosleep_calls = 0;
  uint64_t blocks_written = 0;  // the main thread's blocking switches in the trace
  uint64_t blocks_noted = 0;
};

SleeperSwitches sleeperWithMinBlock(const std::string& min_block_us) {
  // 20 sleeps of 2 ms, then a 100 ms wait on a pipe, on one cpu: each sleep
  // ends on the cpu it began on (a block that moves cpu is always written).
  Recording run = record(
      {"-F", "19", "--locks", "off", "--sched-min-block", min_block_us},
      {"taskset", "-c", "0", kSleeper, "--count", "20", "--interval-ms", "2", "--pipe-ms", "100"});
  RemoveOnExit cleanup{run.trace_path};
  EXPECT_EQ(run.exit_code, 0) << run.recorder_stderr;
  TraceView trace(run.trace_path);
  EXPECT_TRUE(trace.ok()) << trace.error();
  SleeperSwitches result{.nanosleep_calls = run.value("nanosleep_calls")};
  if (!trace.ok()) return result;
  for (const format::SchedSwitch& s : trace.rows<format::SchedSwitch>())
    result.blocks_written += s.prev_tid == run.value("tid") && s.prev_state != 0;
  result.blocks_noted = shortBlocksNoted(trace);
  return result;
}

TEST(SchedMinBlock, BlocksLongerThanTheThresholdAreWritten) {
  INCISE_REQUIRE_RECORDING();
  SleeperSwitches run = sleeperWithMinBlock("1000");  // 1 ms, the default
  ASSERT_EQ(run.nanosleep_calls, 20u);
  // Each 2 ms sleep and the pipe wait; the start-up's short blocks are not.
  EXPECT_GE(run.blocks_written, 21u);
}

TEST(SchedMinBlock, BlocksShorterThanTheThresholdAreCountedNotWritten) {
  INCISE_REQUIRE_RECORDING();
  SleeperSwitches run = sleeperWithMinBlock("20000");  // 20 ms
  ASSERT_EQ(run.nanosleep_calls, 20u);
  // The sleeps are counted in the note (one delayed past 20 ms on a busy
  // cpu is written); the 100 ms pipe wait is written.
  EXPECT_GE(run.blocks_noted, 15u);
  EXPECT_GE(run.blocks_written, 1u);
  EXPECT_LT(run.blocks_written, 20u);
}

// `incise REPORT TRACE --json --tid TID` parsed.
nlohmann::json reportJson(const std::string& report, const std::string& trace_path, uint64_t tid) {
  std::string json_path = trace_path + "." + report + ".json";
  std::string command = shellQuote(INCISE_ANALYZER_BIN) + " " + report + " " +
                        shellQuote(trace_path) + " --json --limit 0 --tid " + std::to_string(tid) +
                        " -o " + shellQuote(json_path);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return nlohmann::json::parse(readAndRemove(json_path), nullptr, /*allow_exceptions=*/false);
}

// What the reports say of the sleeper's main thread, and what it printed.
struct SleeperOffCpu {
  uint64_t nanosleep_calls = 0;
  uint64_t nanosleep_ns = 0;  // the workload's own clock around each call
  uint64_t pipe_wait_ns = 0;
  uint64_t scheduler_bytes = 0;        // switch, wake-up and block summary chunks
  uint64_t blocks_written = 0;         // the thread's blocking switch rows
  uint64_t summarized_blocks = 0;      // block summary rows' count, in the file
  uint64_t off_cpu_in_nanosleep = 0;   // incise offcpu: the thread's stacks through clock_nanosleep
  uint64_t switches_in_nanosleep = 0;  // and their SWITCHES
  uint64_t off_cpu_in_pipe = 0;        // stacks through block_on_pipe
  uint64_t blocked_and_runnable_ns = 0;  // incise sched, the thread
  uint64_t running_ns = 0;
  uint64_t voluntary_switches = 0;
};

bool throughFunction(const nlohmann::json& frames, const std::string& function) {
  for (const auto& frame : frames)
    if (frame.is_string() && frame.get<std::string>().find(function) != std::string::npos)
      return true;
  return false;
}

SleeperOffCpu sleeperOffCpu(const std::string& min_block_us) {
  // 300 sleeps of 1 ms, then a 100 ms wait on a pipe, on one cpu: with a
  // 20 ms threshold every sleep is a short block, the pipe wait a long one.
  Recording run = record(
      {"-F", "19", "--locks", "off", "--sched-min-block", min_block_us},
      {"taskset", "-c", "0", kSleeper, "--count", "300", "--interval-ms", "1", "--pipe-ms", "100"});
  RemoveOnExit cleanup{run.trace_path};
  EXPECT_EQ(run.exit_code, 0) << run.recorder_stderr;
  SleeperOffCpu result{.nanosleep_calls = run.value("nanosleep_calls"),
                       .nanosleep_ns = run.value("nanosleep_ns"),
                       .pipe_wait_ns = run.value("pipe_wait_ns")};
  TraceView trace(run.trace_path);
  EXPECT_TRUE(trace.ok()) << trace.error();
  if (!trace.ok()) return result;
  for (format::EventKind kind : {format::EventKind::kSchedSwitch, format::EventKind::kWakeup,
                                 format::EventKind::kBlockSummary})
    for (const format::ChunkRef& chunk : trace.reader().chunks(kind))
      result.scheduler_bytes += chunk.length;
  uint64_t tid = run.value("tid");
  for (const format::SchedSwitch& s : trace.rows<format::SchedSwitch>())
    result.blocks_written += s.prev_tid == tid && s.prev_state != 0;
  for (const format::BlockSummary& s : trace.rows<format::BlockSummary>())
    if (s.tid == tid) result.summarized_blocks += s.count;

  nlohmann::json offcpu = reportJson("offcpu", run.trace_path, tid);
  for (const auto& stack : offcpu["stacks"]) {
    if (stack["reason"] != "blocked") continue;
    // The main thread's sleeps (some walks lose the frames between
    // clock_nanosleep and main).
    if (throughFunction(stack["frames"], "clock_nanosleep")) {
      result.off_cpu_in_nanosleep += stack["off_cpu_ns"].get<uint64_t>();
      result.switches_in_nanosleep += stack["switches"].get<uint64_t>();
    } else if (throughFunction(stack["frames"], "block_on_pipe")) {
      result.off_cpu_in_pipe += stack["off_cpu_ns"].get<uint64_t>();
    }
  }
  nlohmann::json sched = reportJson("sched", run.trace_path, tid);
  for (const auto& thread : sched["threads"]) {
    if (thread["tid"] != tid) continue;
    result.blocked_and_runnable_ns =
        thread["blocked_ns"].get<uint64_t>() + thread["runnable_ns"].get<uint64_t>();
    result.running_ns = thread["running_ns"].get<uint64_t>();
    result.voluntary_switches = thread["voluntary_switches"].get<uint64_t>();
  }
  return result;
}

// Every sleep's off-CPU time lies inside the workload's own timing of the
// call, and is at least most of the requested 1 ms. Counts allow for a
// switch the kernel did not report or a walk that lost its frames, in
// either mode.
void expectSleepsAccountedFor(const SleeperOffCpu& run, const char* label) {
  SCOPED_TRACE(label);
  ASSERT_EQ(run.nanosleep_calls, 300u);
  EXPECT_LE(run.off_cpu_in_nanosleep, run.nanosleep_ns);
  EXPECT_GE(run.off_cpu_in_nanosleep, 300u * 900'000u);
  EXPECT_GE(run.switches_in_nanosleep, 290u);
  EXPECT_LE(run.off_cpu_in_pipe, run.pipe_wait_ns);
  EXPECT_GE(run.off_cpu_in_pipe, 90'000'000u);
  // The thread's off-CPU states hold the sleeps and the pipe wait; its
  // running time is not inflated by them.
  EXPECT_GE(run.blocked_and_runnable_ns, run.off_cpu_in_nanosleep + run.off_cpu_in_pipe);
  EXPECT_GE(run.voluntary_switches, 290u);
  EXPECT_LT(run.running_ns, run.nanosleep_ns / 2);
}

TEST(SchedMinBlock, ShortBlocksAreCountedPerStackAndTheReportsAgreeWithEveryBlockWritten) {
  INCISE_REQUIRE_RECORDING();
  SleeperOffCpu every = sleeperOffCpu("0");
  SleeperOffCpu summarized = sleeperOffCpu("20000");  // 20 ms
  expectSleepsAccountedFor(every, "--sched-min-block 0");
  expectSleepsAccountedFor(summarized, "--sched-min-block 20000");
  EXPECT_EQ(every.summarized_blocks, 0u);
  EXPECT_GE(every.blocks_written, 290u);
  // Most sleeps came from summaries, not rows (a sleep that lasted 20 ms on
  // a busy cpu, or that another target interrupted, is written).
  EXPECT_GE(summarized.summarized_blocks, 150u);
  EXPECT_LT(summarized.blocks_written, 150u);
  EXPECT_LT(summarized.scheduler_bytes, every.scheduler_bytes);
}

// A block the recording ends inside is written with its stack: the kernel
// keeps a block's switch-out until its switch-in says how long it was, and
// the recorder sends the ones still open at the end (the sweep).
TEST(SchedMinBlock, ABlockStillOpenWhenTheRecordingEndsIsWrittenWithItsStack) {
  INCISE_REQUIRE_RECORDING();
  // The recording stops after 1 s, the sleeper's pipe wait 1.5 s after it
  // began: the recorder does not wait for it, nor for what it prints.
  Recording run = record({"-F", "19", "--locks", "off", "-d", "1"},
                         {kSleeper, "--count", "2", "--interval-ms", "1", "--pipe-ms", "1500"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  uint64_t pipe_switch_outs = 0, tid = 0;
  for (const format::SchedSwitch& s : trace.rows<format::SchedSwitch>()) {
    if (s.prev_state == 0 ||
        !trace.stackHasFunction(static_cast<uint32_t>(s.prev_pid), s.stack_id, "block_on_pipe"))
      continue;
    ++pipe_switch_outs;
    tid = s.prev_tid;
  }
  ASSERT_EQ(pipe_switch_outs, 1u);
  // The wait began a few ms in and lasted past the recording's end.
  uint64_t off_cpu_in_pipe = 0;
  nlohmann::json offcpu = reportJson("offcpu", run.trace_path, tid);
  for (const auto& stack : offcpu["stacks"])
    if (stack["reason"] == "blocked" && throughFunction(stack["frames"], "block_on_pipe"))
      off_cpu_in_pipe += stack["off_cpu_ns"].get<uint64_t>();
  EXPECT_GE(off_cpu_in_pipe, 500'000'000u) << offcpu.dump(1);
  EXPECT_LE(off_cpu_in_pipe, 1'100'000'000u) << offcpu.dump(1);
}

}  // namespace
}  // namespace incise::testing
