// Unit tests of the recorder pieces that need no BPF: kernel-symbol subsets,
// /proc parsing through a fake proc root, perf-map snapshots, command-line
// parsing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "recorder/options.h"
#include "recorder/perf_map_watcher.h"
#include "recorder/process_tracker.h"
#include "recorder/symbol_collector.h"

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
  std::vector<HitObject> hits = tracker.hitObjects();
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

}  // namespace
}  // namespace incise::recorder
