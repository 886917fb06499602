// MappingTable's process-life rules on records built by hand (the order the
// kernel writes them, and the orders two CPUs' rings can deliver them in),
// /proc snapshots and the observer interface.
#include "recorder/mapping_table.h"

#include <gtest/gtest.h>
#include <sys/mman.h>


namespace incise::recorder {
namespace {

// What an observer heard, one line per call.
class Log final : public MappingObserver {
 public:
  void onMap(const ExecutableMapping& m) override {
    lines.push_back("map " + std::to_string(m.pid) + " " + hex(m.start) + "-" + hex(m.end) + " " +
                    m.object->path);
  }
  void onUnmap(uint32_t pid, uint64_t start, uint64_t end, uint64_t) override {
    lines.push_back("unmap " + std::to_string(pid) + " " + hex(start) + "-" + hex(end));
  }
  void onExec(uint32_t pid, uint64_t) override { lines.push_back("exec " + std::to_string(pid)); }
  void onExit(uint32_t pid, uint64_t) override { lines.push_back("exit " + std::to_string(pid)); }
  std::vector<std::string> take() { return std::exchange(lines, {}); }
  std::vector<std::string> lines;

 private:
  static std::string hex(uint64_t value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%lx", static_cast<unsigned long>(value));
    return text;
  }
};

ExecutableMapping mapping(MappingTable& table, uint32_t pid, uint64_t start, uint64_t end,
                          uint64_t time, const std::string& path) {
  return ExecutableMapping{.pid = pid,
                           .start = start,
                           .end = end,
                           .prot = PROT_READ | PROT_EXEC,
                           .time = time,
                           .object = table.object(path, "")};
}

std::string pathAt(const MappingTable& table, uint32_t pid, uint64_t address) {
  const ExecutableMapping* found = table.find(pid, address);
  return found ? found->object->path : "";
}

TEST(MappingTable, ExecEndsTheOldImageAndKeepsTheNewOnesRecordsWhateverTheirOrder) {
  MappingTable table;
  table.map(mapping(table, 10, 0x1000, 0x2000, 100, "/bin/sh"));
  // The new image's mapping came through the other CPU's ring first.
  table.map(mapping(table, 10, 0x5000, 0x6000, 210, "/usr/bin/app"));
  table.exec(10, 200);
  EXPECT_EQ(pathAt(table, 10, 0x1800), "");
  EXPECT_EQ(pathAt(table, 10, 0x5800), "/usr/bin/app");
  EXPECT_TRUE(table.complete(10));
  // A record of the old image drained late is stale.
  table.map(mapping(table, 10, 0x3000, 0x4000, 150, "/lib/libold.so"));
  EXPECT_EQ(pathAt(table, 10, 0x3800), "");
  EXPECT_EQ(table.staleRecords(), 1u);
}

TEST(MappingTable, ForkCopiesTheParentAndANewerMappingOverARangeWins) {
  MappingTable table;
  Log log;
  table.subscribe(&log);
  table.map(mapping(table, 10, 0x1000, 0x3000, 100, "/usr/bin/app"));
  table.exec(10, 50);  // exec before the mapping: complete
  table.fork(10, 11, 300);
  EXPECT_EQ(pathAt(table, 11, 0x1800), "/usr/bin/app");
  EXPECT_TRUE(table.complete(11));
  // A new thread is no new process.
  table.fork(11, 11, 310);
  EXPECT_EQ(pathAt(table, 11, 0x1800), "/usr/bin/app");
  // dlopen over part of the range: the old mapping survives around it.
  table.map(mapping(table, 11, 0x2000, 0x2800, 400, "/lib/libplugin.so"));
  EXPECT_EQ(pathAt(table, 11, 0x1800), "/usr/bin/app");
  EXPECT_EQ(pathAt(table, 11, 0x2400), "/lib/libplugin.so");
  EXPECT_EQ(pathAt(table, 11, 0x2900), "/usr/bin/app");
  EXPECT_EQ(table.find(11, 0x2900)->file_offset, 0x1800u);
  // The parent is untouched; an older record over the same range loses.
  EXPECT_EQ(pathAt(table, 10, 0x2400), "/usr/bin/app");
  table.map(mapping(table, 11, 0x2000, 0x2800, 350, "/lib/libolder.so"));
  EXPECT_EQ(pathAt(table, 11, 0x2400), "/lib/libplugin.so");
  EXPECT_EQ(log.take(), (std::vector<std::string>{
                            "map 10 1000-3000 /usr/bin/app",
                            "exec 10",
                            "map 11 1000-3000 /usr/bin/app",
                            "unmap 11 2000-2800",
                            "map 11 2000-2800 /lib/libplugin.so",
                        }));
}

TEST(MappingTable, ExitKeepsMappingsForLateSamplesAndAReusedPidStartsOver) {
  MappingTable table;
  table.map(mapping(table, 10, 0x1000, 0x2000, 100, "/usr/bin/app"));
  table.exit(10, 500);
  EXPECT_FALSE(table.alive(10));
  EXPECT_EQ(pathAt(table, 10, 0x1800), "/usr/bin/app");  // samples still in the rings
  table.forgetExited(500 + MappingTable::kRetentionNs / 2);
  EXPECT_TRUE(table.follows(10));
  // The pid is reused by a new process before the state was dropped.
  table.fork(1, 10, 600);
  EXPECT_TRUE(table.alive(10));
  EXPECT_EQ(pathAt(table, 10, 0x1800), "");
  // An exit record older than that fork belongs to the previous process.
  table.exit(10, 550);
  EXPECT_TRUE(table.alive(10));
  table.exit(10, 700);
  table.forgetExited(700 + MappingTable::kRetentionNs + 1);
  EXPECT_FALSE(table.follows(10));
  EXPECT_EQ(table.objectCount(), 0u);  // no mapping uses the object any more
}

TEST(MappingTable, ASnapshotReplacesWhatWasKnownButKeepsRecordTimes) {
  MappingTable table;
  Log log;
  table.subscribe(&log);
  table.map(mapping(table, 10, 0x1000, 0x2000, 100, "/usr/bin/app"));
  table.map(mapping(table, 10, 0x3000, 0x4000, 120, "/lib/gone.so"));
  EXPECT_FALSE(table.complete(10));  // older than the recording: records alone do not say all
  std::vector<ExecutableMapping> now = {mapping(table, 10, 0x1000, 0x2000, 1, "/usr/bin/app"),
                                        mapping(table, 10, 0x7000, 0x8000, 1, "/lib/libc.so.6")};
  log.take();
  table.loadSnapshot(10, std::move(now), 1000);
  EXPECT_TRUE(table.complete(10));
  EXPECT_EQ(table.find(10, 0x1800)->time, 100u);  // the record's time, not the snapshot's
  EXPECT_EQ(pathAt(table, 10, 0x3800), "");
  EXPECT_EQ(pathAt(table, 10, 0x7800), "/lib/libc.so.6");
  EXPECT_EQ(log.take(),
            (std::vector<std::string>{"unmap 10 3000-4000", "map 10 7000-8000 /lib/libc.so.6"}));
  // A record older than the read says nothing the read did not.
  table.map(mapping(table, 10, 0x9000, 0xa000, 900, "/lib/libearly.so"));
  EXPECT_EQ(pathAt(table, 10, 0x9800), "");
  table.markAllIncomplete();
  EXPECT_FALSE(table.complete(10));
}

TEST(MappingTable, FollowsOnlyKnownProcessesAndTheirChildrenWhenAsked) {
  MappingTable table;
  table.setFollowOnlyKnown(true);
  table.map(mapping(table, 20, 0x1000, 0x2000, 100, "/usr/bin/other"));
  EXPECT_FALSE(table.follows(20));
  table.loadSnapshot(10, {}, 50);
  table.fork(10, 11, 200);
  table.fork(20, 21, 200);
  EXPECT_TRUE(table.follows(11));
  EXPECT_FALSE(table.follows(21));
  table.map(mapping(table, 11, 0x1000, 0x2000, 300, "/usr/bin/child"));
  EXPECT_EQ(pathAt(table, 11, 0x1800), "/usr/bin/child");
}

TEST(MappingTable, Vdso64BitProcessesShareTheImageObject) {
  MappingTable table;
  auto image = table.object("[vdso]", "\x12\x34", "/proc/self/fd/9");
  table.setVdso(image);
  table.map(mapping(table, 10, 0x7fff0000, 0x7fff2000, 100, "[vdso]"));  // below 4 GiB: 32-bit
  table.map(mapping(table, 10, 0x7ffd00000000, 0x7ffd00002000, 100, "[vdso]"));
  EXPECT_EQ(table.find(10, 0x7fff1000)->object->build_id, "");
  EXPECT_EQ(table.find(10, 0x7ffd00001000)->object, image);
}

}  // namespace
}  // namespace incise::recorder
