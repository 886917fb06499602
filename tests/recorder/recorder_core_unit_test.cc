// Unit tests of the recorder pieces that need no BPF: kernel-symbol subsets,
// /proc parsing through a fake proc root, perf-map snapshots, command-line
// parsing.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "objfile/kallsyms.h"
#include "recorder/metadata/hit_offsets.h"
#include "recorder/metadata/perf_map_watcher.h"
#include "recorder/metadata/process_tracker.h"
#include "recorder/metadata/symbol_collector.h"
#include "recorder/options.h"

namespace incise::recorder {
namespace {

namespace fs = std::filesystem;

fs::path makeFakeProc() {
  fs::path root = fs::temp_directory_path() / ("incise-fake-proc-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "42" / "task" / "43");
  fs::create_directories(root / "42" / "root" / "tmp");
  std::ofstream(root / "42" / "comm") << "server\n";
  std::ofstream(root / "42" / "task" / "43" / "comm") << "worker\n";
  std::ofstream(root / "42" / "cmdline") << std::string(
      "server\0--port\0"
      "80\0",
      17);
  std::ofstream(root / "42" / "stat") << "42 (ser ver) S 7 42 42 0";
  std::ofstream(root / "42" / "maps")
      << "00400000-00401000 r--p 00000000 08:01 100 /usr/bin/server\n"
         "00401000-00402000 r-xp 00001000 08:01 100 /usr/bin/server\n"
         "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n"
         "7fff00000000-7fff00001000 rw-p 00000000 00:00 0 [stack]\n";
  return root;
}

TEST(ProcessTracker, ReadsCommCmdlineParentAndExecutableMaps) {
  fs::path root = makeFakeProc();
  ProcessTracker tracker(root.string());
  tracker.notePid(42, 1000);
  format::MetadataDelta delta = tracker.takeDelta(2000);
  ASSERT_EQ(delta.processes.size(), 1u);
  EXPECT_EQ(delta.processes[0].comm, "server");
  EXPECT_EQ(delta.processes[0].ppid, 7u);
  EXPECT_EQ(delta.processes[0].cmdline, (std::vector<std::string>{"server", "--port", "80"}));
  ASSERT_EQ(delta.threads.size(), 1u);
  EXPECT_EQ(delta.threads[0].comm, "worker");
  ASSERT_EQ(delta.mappings.size(), 2u);  // only executable ones
  EXPECT_EQ(delta.mappings[0].path, "/usr/bin/server");
  EXPECT_EQ(delta.mappings[0].file_offset, 0x1000u);
  EXPECT_TRUE(delta.mappings[1].path.empty());  // anonymous executable (JIT)

  uint64_t frames[] = {0x401234, 0x7f0000000010, 0x12345};
  tracker.noteUserFrames(42, frames, 3000);
  std::vector<HitObject> hits = tracker.symbols().hitObjects();
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].path, "/usr/bin/server");
  EXPECT_EQ(hits[0].open_path, (root / "42" / "root").string() + "/usr/bin/server");
  // The object is read when first hit; this one does not exist, which is noted.
  format::MetadataDelta later = tracker.takeDelta(4000);
  ASSERT_EQ(later.notes.size(), 1u);
  EXPECT_NE(later.notes[0].find("symbols of /usr/bin/server"), std::string::npos) << later.notes[0];
  EXPECT_TRUE(later.objects.empty());
  tracker.noteUserFrames(42, frames, 5000);  // a known object is not read twice
  EXPECT_TRUE(tracker.takeDelta(6000).empty());
  fs::remove_all(root);
}

TEST(ProcessTracker, ForgetsExitedProcessesAfterTheRetentionAndSeesPidReuse) {
  fs::path root = makeFakeProc();
  ProcessTracker tracker(root.string());
  const uint64_t exit_time = 10'000'000'000;
  tracker.noteThread(42, 43, exit_time - 5);
  (void)tracker.takeDelta(exit_time - 4);
  tracker.onExit(42, 43, /*whole_process=*/true, exit_time);
  // A sample older than the exit, drained late, finds the state still there.
  uint64_t frames[] = {0x401234};
  tracker.noteUserFrames(42, frames, exit_time - 1);
  tracker.forgetExited(exit_time + ProcessTracker::kExitedRetentionNs / 2);
  EXPECT_EQ(tracker.processCount(), 1u);
  EXPECT_TRUE(tracker.takeDelta(exit_time).processes.empty());  // not read again
  tracker.forgetExited(exit_time + ProcessTracker::kExitedRetentionNs + 1);
  EXPECT_EQ(tracker.processCount(), 0u);
  EXPECT_EQ(tracker.threadCount(), 0u);
  EXPECT_TRUE(tracker.knownPids().empty());
  // The pid comes back as a new process: read again.
  tracker.notePid(42, exit_time + 3 * ProcessTracker::kExitedRetentionNs);
  EXPECT_EQ(tracker.takeDelta(0).processes.size(), 1u);
  fs::remove_all(root);
}

TEST(ProcessTracker, TellsItsListenersOfExecsAndWholeProcessExits) {
  fs::path root = makeFakeProc();
  ProcessTracker tracker(root.string());
  std::vector<uint32_t> execs, exits;
  tracker.addExecListener([&execs](uint32_t pid) { execs.push_back(pid); });
  tracker.addExitListener([&exits](uint32_t pid) { exits.push_back(pid); });
  tracker.noteThread(42, 43, 1);
  tracker.onExec(42, 2);
  tracker.onExit(42, 43, /*whole_process=*/false, 3);  // one thread: not the process
  EXPECT_TRUE(exits.empty());
  tracker.onExit(42, 42, /*whole_process=*/true, 4);
  EXPECT_EQ(execs, std::vector<uint32_t>{42});
  EXPECT_EQ(exits, std::vector<uint32_t>{42});
  fs::remove_all(root);
}

TEST(ProcessTracker, DropsExitedThreadsAndProcessesThatVanishedWithoutAnExit) {
  fs::path root = makeFakeProc();
  ProcessTracker tracker(root.string());
  tracker.noteThread(42, 43, 1);
  EXPECT_EQ(tracker.takeDelta(2).processes.size(), 1u);
  EXPECT_EQ(tracker.threadCount(), 1u);
  tracker.onExit(42, 43, /*whole_process=*/false, 100);
  tracker.forgetExited(100 + ProcessTracker::kExitedRetentionNs + 1);
  EXPECT_EQ(tracker.threadCount(), 0u);
  EXPECT_EQ(tracker.processCount(), 1u);
  // No exit event (a waker outside the targets): the liveness sweep notices.
  fs::remove_all(root / "42");
  uint64_t later = ProcessTracker::kLivenessSweepNs * 2;
  tracker.forgetExited(later);
  tracker.forgetExited(later + ProcessTracker::kExitedRetentionNs + 1);
  EXPECT_EQ(tracker.processCount(), 0u);
  // A pid that is already gone when first seen writes no nameless process.
  tracker.notePid(77, later);
  EXPECT_TRUE(tracker.takeDelta(later).processes.empty());
  fs::remove_all(root);
}

TEST(ProcessTracker, WritesQueuedSymbolTablesOutUnderPressure) {
  fs::path root = makeFakeProc();
  // The test binary itself stands in for the process's executable.
  fs::create_directories(root / "42" / "root" / "usr" / "bin");
  fs::copy_file(fs::read_symlink("/proc/self/exe"),
                root / "42" / "root" / "usr" / "bin" / "server");
  ProcessTracker tracker(root.string());
  int calls = 0;
  size_t bytes_seen = 0;
  tracker.symbols().setPressure(1, [&] {
    ++calls;
    bytes_seen = tracker.symbols().queuedBytes();
    format::MetadataDelta delta = tracker.takeDelta(7);
    ASSERT_EQ(delta.objects.size(), 1u);
    EXPECT_FALSE(delta.objects[0].symbols.empty());
  });
  uint64_t frames[] = {0x401234};
  tracker.noteUserFrames(42, frames, 3000);
  EXPECT_EQ(calls, 1);
  EXPECT_GT(bytes_seen, 1000u);
  EXPECT_EQ(tracker.symbols().queuedBytes(), 0u);
  fs::remove_all(root);
}

// A function of this binary whose address a "frame" can point into.
__attribute__((noinline)) int hitByALargeObjectFrame(int x) {
  asm volatile("" : "+r"(x));
  return x * 3 + 1;
}

TEST(ProcessTracker, LargeTablesEmbedOnlyTheSymbolsHitReadAtTheEnd) {
  ProcessTracker tracker;  // the real /proc: this process and its own binary
  tracker.symbols().setFullSymbolTableLimit(10);
  uint32_t self = static_cast<uint32_t>(getpid());
  EXPECT_EQ(hitByALargeObjectFrame(1), 4);
  uint64_t frames[] = {reinterpret_cast<uint64_t>(&hitByALargeObjectFrame) + 1};
  tracker.noteUserFrames(self, frames, 1);
  ASSERT_EQ(tracker.symbols().largeObjectCount(), 1u);
  EXPECT_TRUE(tracker.takeDelta(2).objects.empty());  // nothing read yet
  tracker.symbols().readLargeObjects();
  format::MetadataDelta delta = tracker.takeDelta(3);
  ASSERT_EQ(delta.objects.size(), 1u);
  const auto& symbols = delta.objects[0].symbols;
  ASSERT_EQ(symbols.size(), 1u);
  EXPECT_NE(symbols[0].name.find("hitByALargeObjectFrame"), std::string::npos) << symbols[0].name;
  EXPECT_EQ(delta.objects[0].path, fs::read_symlink("/proc/self/exe").string());
  EXPECT_EQ(tracker.symbols().largeObjectCount(), 0u);
}

// Frames repeat across stacks, and repeats are skipped: a frame seen as a
// leaf first and as a caller's return address later still adds the offset
// before it (where the analyzer names a return address).
TEST(ProcessTracker, LargeObjectOffsetsOfARepeatedFrameAsLeafThenAsReturnAddress) {
  ProcessTracker tracker;
  tracker.symbols().setFullSymbolTableLimit(10);
  const uint32_t self = static_cast<uint32_t>(getpid());
  const uint64_t a = reinterpret_cast<uint64_t>(&hitByALargeObjectFrame) + 1;
  const uint64_t b = a + 2;
  uint64_t leaf_a[] = {a};
  tracker.noteUserFrames(self, leaf_a, 1);
  tracker.noteUserFrames(self, leaf_a, 2);
  EXPECT_EQ(tracker.symbols().largeObjectHitOffsets(), 1u);
  uint64_t b_called_from_a[] = {b, a};
  tracker.noteUserFrames(self, b_called_from_a, 3);
  EXPECT_EQ(tracker.symbols().largeObjectHitOffsets(), 3u);  // b, a and a - 1
  tracker.noteUserFrames(self, leaf_a, 4);
  tracker.noteUserFrames(self, b_called_from_a, 5);
  EXPECT_EQ(tracker.symbols().largeObjectHitOffsets(), 3u);
}

// Offsets noted many times, in no order, across the table's growths, read
// between notes: each once, in order, as a set of the same notes holds them
// (0 included: slots keep offset + 1).
TEST(HitOffsets, EachOffsetOnceInOrderAcrossGrowths) {
  HitOffsets offsets;
  std::set<uint64_t> expected;
  EXPECT_TRUE(offsets.sorted().empty());
  auto same = [&] {
    std::vector<uint64_t> sorted = offsets.sorted();
    return offsets.size() == expected.size() &&
           std::equal(sorted.begin(), sorted.end(), expected.begin(), expected.end());
  };
  uint64_t x = 12345;
  for (int i = 0; i < 50000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t offset = i % 3 ? (x >> 33) % 7000 : (x >> 8);  // many repeats, some far apart
    offsets.add(offset);
    expected.insert(offset);
    if (i % 9973 == 0) {
      ASSERT_TRUE(same()) << i;
    }
  }
  EXPECT_TRUE(expected.count(0));
  EXPECT_TRUE(same());
}

TEST(ProcessTracker, KernelFramesRepeatedAcrossStacksAreEachNotedOnce) {
  ProcessTracker tracker;
  std::vector<uint64_t> frames;
  for (uint64_t i = 0; i < 10000; ++i) frames.push_back(0xffffffff81000000ull + i * 0x10);
  tracker.symbols().noteKernelFrames(frames);
  tracker.symbols().noteKernelFrames(std::span<const uint64_t>(frames).subspan(5000));
  tracker.symbols().noteKernelFrames(frames);
  const std::set<uint64_t>& noted = tracker.symbols().hitKernelAddresses();
  EXPECT_EQ(noted.size(), frames.size());
  EXPECT_TRUE(std::equal(noted.begin(), noted.end(), frames.begin()));
  uint64_t zero[] = {0};  // an address equal to an empty slot's value is still noted
  tracker.symbols().noteKernelFrames(zero);
  EXPECT_EQ(noted.count(0), 1u);
}

uint64_t g_return_address = 0;

__attribute__((noinline)) int calledFromACallerFrame(int x) {
  asm volatile("" : "+r"(x));
  g_return_address = reinterpret_cast<uint64_t>(__builtin_return_address(0));
  return x * 5 + 2;
}

// A caller's frame is a return address: the analyzer names it at address - 1,
// the call, which belongs to the caller even when the call is the caller's
// last instruction and the return address the next function's start. The
// subset must name it as the whole table would.
TEST(ProcessTracker, LargeTableSubsetsKeepTheSymbolBeforeAReturnAddress) {
  ProcessTracker tracker;
  tracker.symbols().setFullSymbolTableLimit(10);
  EXPECT_EQ(calledFromACallerFrame(1), 7);
  // The leaf in the callee, the caller's frame a real return address.
  const uint64_t return_address = g_return_address;
  const uint64_t leaf = reinterpret_cast<uint64_t>(&calledFromACallerFrame) + 1;
  uint64_t frames[] = {leaf, return_address};
  tracker.noteUserFrames(static_cast<uint32_t>(getpid()), frames, 1);
  tracker.symbols().readLargeObjects();
  format::MetadataDelta delta = tracker.takeDelta(2);
  ASSERT_EQ(delta.objects.size(), 1u);

  // What the whole table says about return_address - 1, in ELF addresses.
  auto whole = readObjectSymbols({.path = delta.objects[0].path,
                                  .open_path = "/proc/self/exe",
                                  .build_id = delta.objects[0].build_id});
  ASSERT_TRUE(whole) << whole.error().message();
  // The symbol holding `address`, as the analyzer's table finds it.
  auto named = [](const std::vector<format::Symbol>& symbols, uint64_t address) {
    const format::Symbol* best = nullptr;
    for (const auto& symbol : symbols) {
      if (symbol.address <= address && (!best || symbol.address > best->address)) best = &symbol;
    }
    if (best && best->size != 0 && address - best->address >= best->size) return std::string();
    return best ? best->name : std::string();
  };
  // Runtime -> ELF address: this binary is PIE, and both functions are in it.
  const uint64_t elf_of_callee = [&] {
    for (const auto& symbol : whole->symbols)
      if (symbol.name.find("calledFromACallerFrame") != std::string::npos) return symbol.address;
    return uint64_t{0};
  }();
  ASSERT_NE(elf_of_callee, 0u);
  const uint64_t bias = reinterpret_cast<uint64_t>(&calledFromACallerFrame) - elf_of_callee;
  const uint64_t elf_of_call = return_address - bias - 1;
  const std::string before = named(whole->symbols, elf_of_call);
  ASSERT_FALSE(before.empty());
  EXPECT_EQ(named(delta.objects[0].symbols, elf_of_call), before);
  EXPECT_NE(named(delta.objects[0].symbols, elf_of_callee).find("calledFromACallerFrame"),
            std::string::npos);
}

TEST(SymbolCollector, KernelSubsetFromAFileEqualsTheSubsetOfTheWholeTable) {
  // Over 1 MiB of text, so the file outgrows the first read buffer.
  std::string text;
  for (uint64_t i = 0; i < 40000; ++i) {
    char line[96];
    snprintf(line, sizeof(line), "%016llx %c function_number_%llu\n",
             static_cast<unsigned long long>(0xffffffff81000000ull + i * 0x40), i % 7 ? 'T' : 't',
             static_cast<unsigned long long>(i));
    text += line;
  }
  ASSERT_GT(text.size(), 1u << 20);
  fs::path path = fs::temp_directory_path() / ("incise-kallsyms-" + std::to_string(getpid()));
  { std::ofstream(path) << text; }
  std::set<uint64_t> hits = {0xffffffff81000010ull, 0xffffffff81000000ull + 33333 * 0x40 + 3,
                             0xffffffff81000000ull + 39999 * 0x40 + 8, 0x10};
  std::vector<format::KernelSymbol> expected =
      kernelSymbolsCovering(objfile::parseKallsyms(text), hits);
  std::vector<format::KernelSymbol> got = kernelSymbolsCoveringFile(path.string(), hits);
  ASSERT_EQ(got.size(), 5u);  // three hits, two of them with a successor
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].address, expected[i].address);
    EXPECT_EQ(got[i].name, expected[i].name);
  }
  EXPECT_EQ(got[2].name, "function_number_33333");
  EXPECT_TRUE(kernelSymbolsCoveringFile((path.string() + ".missing"), hits).empty());
  fs::remove(path);
}

TEST(SymbolCollector, KernelSubsetHoldsHitSymbolsAndTheirSuccessors) {
  std::vector<format::KernelSymbol> all = {
      {0x1000, "a", ""}, {0x2000, "b", ""}, {0x3000, "c", ""}, {0x4000, "d", ""}};
  std::vector<format::KernelSymbol> subset = kernelSymbolsCovering(all, {0x2010, 0x2020, 0x500});
  ASSERT_EQ(subset.size(), 2u);
  EXPECT_EQ(subset[0].name, "b");
  EXPECT_EQ(subset[1].name, "c");
  EXPECT_EQ(kernelSymbolsCovering(all, {0x4100}).size(), 1u);
}

TEST(PerfMapWatcher, SnapshotsOnlyNewCompleteLines) {
  fs::path root = makeFakeProc();
  fs::path map = root / "42" / "root" / "tmp" / "perf-42.map";
  { std::ofstream(map) << "1000 10 first\n2000 20 sec"; }
  PerfMapWatcher watcher(root.string());
  std::vector<format::PerfMapSnapshot> out;
  watcher.poll({42}, 5, out);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].entries.size(), 1u);
  EXPECT_EQ(out[0].entries[0].name, "first");
  EXPECT_EQ(out[0].time, 5u);
  { std::ofstream(map, std::ios::app) << "ond\n"; }
  watcher.poll({42}, 9, out);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[1].entries.size(), 1u);
  EXPECT_EQ(out[1].entries[0].name, "second");
  EXPECT_EQ(out[1].entries[0].start, 0x2000u);
  watcher.poll({42}, 12, out);
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(watcher.watchedPids(), 1u);
  watcher.poll({}, 13, out);  // the process exited: its position is dropped
  EXPECT_EQ(watcher.watchedPids(), 0u);
  fs::remove_all(root);
}

// A map that is a link out of the process's root or a FIFO is not read: the
// recorder neither copies another file's lines nor blocks.
TEST(PerfMapWatcher, ReadsNeitherALinkOutOfTheRootNorAFifo) {
  fs::path root = makeFakeProc();
  fs::path tmp = root / "42" / "root" / "tmp";
  fs::path outside = root / "outside.map";
  { std::ofstream(outside) << "1000 10 secret\n"; }
  fs::create_symlink(fs::absolute(outside), tmp / "perf-42.map");
  PerfMapWatcher watcher(root.string());
  std::vector<format::PerfMapSnapshot> out;
  watcher.poll({42}, 5, out);
  EXPECT_TRUE(out.empty());
  fs::remove(tmp / "perf-42.map");
  ASSERT_EQ(mkfifo((tmp / "perf-42.map").c_str(), 0600), 0);
  watcher.poll({42}, 6, out);  // returns: no writer, yet no wait
  EXPECT_TRUE(out.empty());
  fs::remove_all(root);
}

TEST(Options, DefaultsAndCommand) {
  const char* argv[] = {"incise-record", "-d", "2", "--", "sleep", "1"};
  auto parsed = parseCommandLine(6, argv);
  ASSERT_TRUE(parsed) << parsed.error().message();
  const RecordConfig& c = parsed->config;
  EXPECT_EQ(c.output, "incise.trace");
  EXPECT_EQ(c.frequency_hz, 99u);
  EXPECT_TRUE(c.stacks);
  EXPECT_TRUE(c.sched);
  EXPECT_EQ(c.lock_mode, LockMode::kContended);
  EXPECT_EQ(c.target_kind, TargetKind::kCommand);
  EXPECT_EQ(c.command, (std::vector<std::string>{"sleep", "1"}));
  EXPECT_DOUBLE_EQ(c.duration_seconds, 2.0);
  EXPECT_EQ(c.sched_stacks, SchedStacks::kBlocked);
}

TEST(Options, SchedStacks) {
  const char* all[] = {"incise-record", "-a", "--sched-stacks", "all"};
  auto parsed = parseCommandLine(4, all);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->config.sched_stacks, SchedStacks::kAll);
  const char* off[] = {"incise-record", "-a", "--sched-stacks", "off"};
  parsed = parseCommandLine(4, off);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->config.sched_stacks, SchedStacks::kOff);
  const char* bad[] = {"incise-record", "-a", "--sched-stacks", "some"};
  parsed = parseCommandLine(4, bad);
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message().find("--sched-stacks some"), std::string::npos);
}

TEST(Options, SchedMinBlock) {
  const char* none[] = {"incise-record", "-a"};
  auto parsed = parseCommandLine(2, none);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->config.sched_min_block_ns, 1'000'000u);  // 1 ms
  const char* zero[] = {"incise-record", "-a", "--sched-min-block", "0"};
  parsed = parseCommandLine(4, zero);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->config.sched_min_block_ns, 0u);
  const char* us[] = {"incise-record", "-a", "--sched-min-block", "250"};
  parsed = parseCommandLine(4, us);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->config.sched_min_block_ns, 250'000u);
  const char* huge[] = {"incise-record", "-a", "--sched-min-block", "10000001"};
  parsed = parseCommandLine(4, huge);
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message().find("--sched-min-block"), std::string::npos);
}

TEST(Options, LockProbesAndSizes) {
  const char* argv[] = {"incise-record", "-a", "--lock-probe", "/opt/a:b:lock:unlock",
                        "--max-size",    "3",  "--no-sched",   "--page-faults",
                        "--locks",       "all"};
  auto parsed = parseCommandLine(10, argv);
  ASSERT_TRUE(parsed) << parsed.error().message();
  const RecordConfig& c = parsed->config;
  ASSERT_EQ(c.lock_probes.size(), 1u);
  EXPECT_EQ(c.lock_probes[0].binary, "/opt/a:b");
  EXPECT_EQ(c.lock_probes[0].acquire_symbol, "lock");
  EXPECT_EQ(c.lock_probes[0].release_symbol, "unlock");
  EXPECT_EQ(c.max_size_bytes, 3u << 20);
  EXPECT_FALSE(c.sched);
  EXPECT_TRUE(c.page_faults);
  EXPECT_EQ(c.lock_mode, LockMode::kAll);
}

// parseCommandLine on {"incise-record", "-a", words...}: the error's message, or "" when it parses.
std::string samplingError(std::vector<const char*> words, RecordConfig* config = nullptr) {
  words.insert(words.begin(), {"incise-record", "-a"});
  auto parsed = parseCommandLine(static_cast<int>(words.size()), words.data());
  if (!parsed) return parsed.error().message();
  if (config) *config = parsed->config;
  return "";
}

TEST(Options, SamplingEventsByPerfNames) {
  RecordConfig c;
  EXPECT_EQ(samplingError({}, &c), "");
  EXPECT_EQ(c.sample_event, "");  // cycles with a PMU, else cpu-clock
  EXPECT_EQ(c.sample_period, 0u);
  EXPECT_EQ(samplingError({"-e", "faults", "-c", "1"}, &c), "");
  EXPECT_EQ(c.sample_event, "page-faults");
  EXPECT_EQ(c.sample_period, 1u);
  EXPECT_EQ(samplingError({"-e", "cs"}, &c), "");
  EXPECT_EQ(c.sample_event, "context-switches");
  EXPECT_EQ(samplingError({"-e", "instructions"}, &c), "");  // whether a PMU counts is for later
  EXPECT_EQ(c.sample_event, "instructions");

  std::string unknown = samplingError({"-e", "pagefaults"});
  EXPECT_NE(unknown.find("-e pagefaults: unknown event; software events: cpu-clock, task-clock, "
                         "page-faults (faults)"),
            std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("hardware events (need a PMU): cycles (cpu-cycles), instructions"),
            std::string::npos)
      << unknown;
  EXPECT_NE(samplingError({"-c", "0"}).find("-c"), std::string::npos);
  EXPECT_NE(samplingError({"-c", "1000000000001"}).find("-c"), std::string::npos);
  EXPECT_NE(samplingError({"-F", "99", "-c", "10"}).find("-c and -F exclude each other"),
            std::string::npos);
}

TEST(Options, CountersArePerfNamesOfCountingEvents) {
  RecordConfig c;
  EXPECT_EQ(samplingError({"--counters", "faults,cs,cpu-migrations"}, &c), "");
  EXPECT_EQ(c.counters,
            (std::vector<std::string>{"page-faults", "context-switches", "cpu-migrations"}));
  EXPECT_NE(samplingError({"--counters", "page-faults,faults"}).find("page-faults: given twice"),
            std::string::npos);
  EXPECT_NE(samplingError({"--counters", "task-clock"}).find("a clock is not counted per sample"),
            std::string::npos);
  EXPECT_NE(samplingError({"--counters", "page-faults,"}).find("an empty name"), std::string::npos);
  EXPECT_NE(samplingError({"--counters", "faults,cs,minor-faults,major-faults,migrations"})
                .find("5 counters; at most 4"),
            std::string::npos);
  EXPECT_NE(samplingError({"--counters", "faults,bogus"}).find("--counters bogus: unknown event"),
            std::string::npos);
}

}  // namespace
}  // namespace incise::recorder
