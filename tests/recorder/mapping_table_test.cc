// MappingTable's process-life rules on records built by hand (the order the
// kernel writes them, and the orders two CPUs' rings can deliver them in),
// /proc snapshots, the observer interface, the feed that applies the
// kernel's records, and the decoder on record bytes laid out as the kernel
// lays them out.
#include "recorder/metadata/mapping_table.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "recorder/metadata/mmap_record_feed.h"
#include "recorder/metadata/own_frames.h"
#include "recorder/sources/kernel_records.h"

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

template <typename T>
void append(std::vector<uint8_t>& out, const T& value) {
  const size_t at = out.size();
  out.resize(at + sizeof(value));
  std::memcpy(out.data() + at, &value, sizeof(value));
}

KernelRecord mmapRecord(uint32_t pid, uint64_t time, uint64_t start, const std::string& path) {
  KernelRecord r{.kind = KernelRecord::kMmap, .time = time, .pid = pid, .tid = pid};
  r.start = start;
  r.length = 0x1000;
  r.prot = PROT_READ | PROT_EXEC;
  r.path = path;
  r.build_id = "\x01\x02";
  return r;
}

TEST(MmapRecordFeed, AppliesABatchInTimeOrderWhateverOrderTheRingsGaveIt) {
  MappingTable table;
  MmapRecordFeed feed(table, "/fake-proc");
  // One CPU's ring drained first held the later records.
  std::vector<KernelRecord> batch = {
      mmapRecord(10, 30, 0x7000, "/usr/lib/libc.so.6"),
      mmapRecord(10, 25, 0x1000, "/usr/bin/app"),
      mmapRecord(10, 5, 0x9000, "/bin/sh"),  // the image before the exec
      KernelRecord{.kind = KernelRecord::kExec, .time = 20, .pid = 10, .tid = 10},
      KernelRecord{.kind = KernelRecord::kFork, .time = 1, .pid = 10, .tid = 10, .parent_pid = 1},
      mmapRecord(10, 40, 0xb000, "/tmp/jit.so (deleted)"),
  };
  feed.apply(batch);
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(feed.applied(), 6u);
  EXPECT_TRUE(table.complete(10));
  EXPECT_EQ(pathAt(table, 10, 0x9800), "");  // ended by the exec
  ASSERT_NE(table.find(10, 0x7800), nullptr);
  EXPECT_EQ(table.find(10, 0x7800)->open_path, "/fake-proc/10/root/usr/lib/libc.so.6");
  EXPECT_EQ(table.find(10, 0x7800)->object->build_id, "\x01\x02");
  EXPECT_EQ(table.find(10, 0xb800)->open_path, "/fake-proc/10/map_files/b000-c000");
  std::vector<KernelRecord> lost = {
      KernelRecord{.kind = KernelRecord::kLost, .time = 50, .lost = 7}};
  feed.apply(lost);
  EXPECT_EQ(feed.lost(), 7u);
  EXPECT_FALSE(table.complete(10));  // a frame miss may now read /proc again
}

// Bytes of one record as the kernel writes it: header, body, sample_id.
std::vector<uint8_t> record(uint32_t type, uint16_t misc, const std::vector<uint8_t>& body,
                            uint32_t pid, uint32_t tid, uint64_t time) {
  perf_event_header header{.type = type,
                           .misc = misc,
                           .size = static_cast<uint16_t>(sizeof(perf_event_header) + body.size() +
                                                         2 * sizeof(uint32_t) + sizeof(uint64_t))};
  std::vector<uint8_t> bytes;
  append(bytes, header);
  for (uint8_t byte : body) bytes.push_back(byte);
  append(bytes, pid);
  append(bytes, tid);
  append(bytes, time);
  return bytes;
}

std::vector<uint8_t> mmap2Body(bool with_build_id, const std::string& path) {
  std::vector<uint8_t> body;
  append(body, uint32_t{42});
  append(body, uint32_t{43});
  append(body, uint64_t{0x7f0000001000});
  append(body, uint64_t{0x2000});
  append(body, uint64_t{0x3000});
  if (with_build_id) {
    append(body, uint8_t{4});
    append(body, uint8_t{0});
    append(body, uint16_t{0});
    uint8_t id[20] = {0xde, 0xad, 0xbe, 0xef};
    append(body, id);
  } else {
    append(body, uint32_t{8});
    append(body, uint32_t{1});
    append(body, uint64_t{777});
    append(body, uint64_t{0});
  }
  append(body, uint32_t{PROT_READ | PROT_EXEC});
  append(body, uint32_t{0});
  body.insert(body.end(), path.begin(), path.end());
  body.resize((body.size() + 8) / 8 * 8, 0);  // NUL-terminated, padded to 8
  return body;
}

TEST(KernelRecords, DecodesMmap2WithAndWithoutBuildIdExecAndFork) {
  auto with_id = record(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID,
                        mmap2Body(true, "/usr/lib/libc.so.6"), 42, 43, 12345);
  std::optional<KernelRecord> m = decodeKernelRecord(with_id);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, KernelRecord::kMmap);
  EXPECT_EQ(m->time, 12345u);
  EXPECT_EQ(m->pid, 42u);
  EXPECT_EQ(m->start, 0x7f0000001000u);
  EXPECT_EQ(m->length, 0x2000u);
  EXPECT_EQ(m->file_offset, 0x3000u);
  EXPECT_EQ(m->prot, static_cast<uint32_t>(PROT_READ | PROT_EXEC));
  EXPECT_EQ(m->path, "/usr/lib/libc.so.6");
  EXPECT_EQ(m->build_id, std::string("\xde\xad\xbe\xef"));

  auto with_inode = record(PERF_RECORD_MMAP2, 0, mmap2Body(false, "//anon"), 42, 43, 5);
  m = decodeKernelRecord(with_inode);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->build_id.empty());
  EXPECT_EQ(m->inode, 777u);
  EXPECT_EQ(m->path, "//anon");

  std::vector<uint8_t> comm;
  append(comm, uint32_t{42});
  append(comm, uint32_t{42});
  comm.insert(comm.end(), {'a', 'p', 'p', 0, 0, 0, 0, 0});
  m = decodeKernelRecord(record(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, comm, 42, 42, 9));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, KernelRecord::kExec);
  EXPECT_FALSE(decodeKernelRecord(record(PERF_RECORD_COMM, 0, comm, 42, 42, 9)));  // a rename

  std::vector<uint8_t> fork;
  for (uint32_t v : {50u, 42u, 50u, 43u}) append(fork, v);
  append(fork, uint64_t{77});
  m = decodeKernelRecord(record(PERF_RECORD_FORK, 0, fork, 50, 50, 77));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, KernelRecord::kFork);
  EXPECT_EQ(m->pid, 50u);
  EXPECT_EQ(m->parent_pid, 42u);
}

TEST(KernelRecords, RefusesRecordsThatDoNotAddUp) {
  auto good = record(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID,
                     mmap2Body(true, "/usr/lib/libc.so.6"), 42, 43, 1);
  // Every truncation, and a header that claims more than there is.
  for (size_t size = 0; size < good.size(); ++size) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<long>(size));
    EXPECT_FALSE(decodeKernelRecord(cut)) << size;
  }
  auto lying = good;
  lying[6] = static_cast<uint8_t>(good.size() + 8);
  EXPECT_FALSE(decodeKernelRecord(lying));
  auto bad_id = good;
  bad_id[sizeof(perf_event_header) + 32] = 21;  // build_id_size past its 20 bytes
  EXPECT_FALSE(decodeKernelRecord(bad_id));
}

TEST(OwnFrames, CutsProgramAndGlueFramesOnlyAtTheLeaf) {
  OwnFrames own;
  own.addProgramRange(0xffffffffc0001000, 0xffffffffc0001400);
  own.addGlueRange(0xffffffff81100000, 0xffffffff81100100);  // bpf_trace_run4
  own.finish();
  const uint64_t schedule = 0xffffffff81900010;
  std::vector<uint64_t> taken_by_program = {0xffffffffc0001234, 0xffffffff81100040, schedule};
  EXPECT_EQ(own.leading(taken_by_program), 2u);
  // Glue without the program at the leaf (a sample in someone else's tracing): kept.
  std::vector<uint64_t> glue_leaf = {0xffffffff81100040, schedule};
  EXPECT_EQ(own.leading(glue_leaf), 0u);
  std::vector<uint64_t> plain = {schedule, 0xffffffff81100040};
  EXPECT_EQ(own.leading(plain), 0u);
  EXPECT_TRUE(OwnFrames::isTracingGlue("bpf_trace_run4"));
  EXPECT_TRUE(OwnFrames::isTracingGlue("__bpf_trace_sched_switch"));
  EXPECT_FALSE(OwnFrames::isTracingGlue("__schedule"));
}

TEST(OwnFrames, ReadsTheGlueFromAKallsymsFile) {
  const std::string path = ::testing::TempDir() + "/own_frames_kallsyms";
  {
    std::ofstream out(path);
    out << "ffffffff81100000 T bpf_trace_run4\n"
           "ffffffff81100130 T bpf_trace_run5\n"
           "ffffffff81100260 t not_glue\n"
           "ffffffff81200000 t __bpf_trace_sched_switch\n"
           "ffffffff81200040 d __bpf_trace_data_not_text\n"
           "ffffffff81900000 T __schedule\n"
           "ffffffffc0001000 t trace_call_bpf\t[some_module]\n"
           "ffffffffc0001100 t after_module_glue\t[some_module]\n"
           "garbage line\n";
  }
  OwnFrames own = OwnFrames::read(path);
  // bpf_trace_run4, _run5, __bpf_trace_sched_switch (to the data symbol
  // after it), trace_call_bpf: each up to the next symbol.
  EXPECT_EQ(own.glueRanges(), 4u);
  own.addProgramRange(0xffffffffc0100000, 0xffffffffc0100100);
  own.finish();
  const uint64_t program = 0xffffffffc0100010;
  std::vector<uint64_t> stack = {program, 0xffffffff8110012f, 0xffffffff81200010,
                                 0xffffffff81900010};
  EXPECT_EQ(own.leading(stack), 3u);
  stack = {program, 0xffffffff81100260};  // not_glue
  EXPECT_EQ(own.leading(stack), 1u);
  EXPECT_EQ(OwnFrames::read("/nonexistent/kallsyms").glueRanges(), 0u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace incise::recorder
