// Test helpers: random traces written through the Writer, with the rows
// that went in kept for comparison, and small file utilities.
//
//   TempDir dir;
//   ExpectedTrace expected = writeRandomTrace(dir.path("t.trace"), 42, {.rows_per_chunk = 100});
//   auto reader = Reader::open(dir.path("t.trace"));
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "format/reader.h"
#include "format/writer.h"

namespace incise::format::test_support {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "incise-test-XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void writeFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Every field of a row, in column order.
#define INCISE_FIELD_VALUE(field, encoding, doc) row.field,
#define INCISE_X(enumerator, id, Struct, COLUMNS, doc)       \
  inline std::vector<uint64_t> fieldsOf(const Struct& row) { \
    return {COLUMNS(INCISE_FIELD_VALUE)};                    \
  }
INCISE_EVENT_KINDS(INCISE_X)
#undef INCISE_X
#undef INCISE_FIELD_VALUE

inline Header testHeader() {
  Header h;
  h.host = "testhost";
  h.kernel_release = "6.18.0-test";
  h.boot_id = "0123-4567";
  h.start_wall_ns = 1700000000000000000ull;
  h.start_mono_ns = 1000;
  h.command_line = {"incise-record", "-F", "999", "--", "./app"};
  h.options.sample_frequency_hz = 999;
  h.options.lock_mode = "contended";
  h.options.sched_enabled = true;
  h.options.lock_probes = {"app:lock:unlock"};
  h.options.sample_event = "page-faults";
  h.options.sample_period = 7;
  h.options.counters = {"context-switches", "cpu-migrations"};
  h.recorder_version = "0.1.0";
  h.cpu_count = 2;
  return h;
}

inline MetadataDelta testMetadata(uint64_t time, uint32_t pid) {
  MetadataDelta d;
  d.time = time;
  d.processes.push_back(Process{pid, 1, "app", {"./app", "--flag"}, time});
  d.threads.push_back(Thread{pid + 1, pid, "worker", time});
  d.mappings.push_back(Mapping{pid, 0x555500000000, 0x555500100000, 0x1000, "/usr/bin/app",
                               std::string("\x01\x02\xff", 3), 5, time});
  ObjectSymbols o;
  o.build_id = "bid";
  o.path = "/usr/bin/app";
  o.symbols = {Symbol{0x1000, 16, "_Z4mainv"}};
  o.segments = {Segment{0, 0, 0x2000, 0x2000, 5}};
  o.elf_type = 3;
  o.eh_frame = std::string("\x00\x01", 2);
  d.objects.push_back(o);
  d.kernel_symbols.push_back(KernelSymbol{0xffffffff81000000, "do_syscall_64", ""});
  d.perf_maps.push_back(
      PerfMapSnapshot{pid, time, {PerfMapEntry{0x7f0000001000, 64, "LazyCompile:foo"}}});
  d.notes.push_back("note " + std::to_string(time));
  return d;
}

// What a random trace holds: rows per kind in append order, and the stacks.
struct ExpectedTrace {
  std::map<EventKind, std::vector<std::vector<uint64_t>>> rows;
  std::map<uint64_t, std::vector<uint64_t>> stacks;
  std::vector<MetadataDelta> metadata;
  uint64_t end_time = 0;
};

template <typename Row>
void setStack(Row& row, uint64_t stack) {
  if constexpr (requires { row.stack_id; }) row.stack_id = stack;
}

// How many columns `kind` had in format 1.2, whose files tests keep: the
// values of those columns come from the seed's own stream, and columns added
// since from a second one, so a new column never moves the old ones' values
// (a test compares a committed 1.2 file with the rows of its seed).
inline size_t columnsInFormat12(EventKind kind) {
  if (kind == EventKind::kLock || kind == EventKind::kCpuSample) return 10;
  if (kind == EventKind::kSchedSwitch) return 8;
  return kindSpec(kind)->column_count;
}

// The last event kind of format 1.2 (kLost); kinds after it came with 2.3.
inline constexpr uint64_t kLastKindOfFormat12 = 7;

// Rows of every kind with random field values (times increasing), random
// stacks, and a metadata delta at every flush.
inline ExpectedTrace writeRandomTrace(const std::string& path, uint64_t seed, WriterOptions options,
                                      size_t rows_per_kind = 500, bool close = true) {
  std::mt19937_64 rng(seed);
  std::mt19937_64 added_columns_rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::mt19937_64 later_rng(seed ^ 0x2200);
  ExpectedTrace expected;
  auto writer = Writer::create(path, testHeader(), options);
  EXPECT_TRUE(writer) << writer.error().message();
  if (!writer) return expected;
  uint64_t time = 5000;
  for (size_t i = 0; i < rows_per_kind; ++i) {
    std::vector<uint64_t> frames(1 + rng() % 12);
    for (auto& f : frames)
      f = (rng() % 2 ? 0xffffffff81000000ull : 0x555500000000ull) + rng() % 4096;
    uint64_t stack = (*writer)->internStack(frames);
    expected.stacks[stack] = frames;
// A kBytes field is its blob's length: 0 through the plain append.
// Kinds added after format 1.2 draw from their own generator and leave the
// time alone, and columns added to older kinds from a second one, so the
// older kinds' rows stay those of tests/format/data's files.
#define INCISE_RANDOM_FIELD(field, encoding, doc)                                   \
  {                                                                                 \
    std::mt19937_64& stream = later                    ? later_rng                  \
                              : column++ < old_columns ? rng                        \
                                                       : added_columns_rng;         \
    row.field = Encoding::encoding == Encoding::kBytes ? 0                          \
                : std::string_view(#field) == "time"   ? time                       \
                                                       : stream() >> (stream() % 64); \
  }
#define INCISE_X(enumerator, id, Struct, COLUMNS, doc)                   \
  {                                                                      \
    const bool later = id > kLastKindOfFormat12;                         \
    Struct row;                                                          \
    size_t column = 0;                                                   \
    const size_t old_columns = columnsInFormat12(EventKind::enumerator); \
    COLUMNS(INCISE_RANDOM_FIELD)                                         \
    setStack(row, stack);                                                \
    (*writer)->append(row);                                              \
    expected.rows[EventKind::enumerator].push_back(fieldsOf(row));       \
    if (!later) time += 1 + rng() % 1000;                                \
  }
    INCISE_EVENT_KINDS(INCISE_X)
#undef INCISE_X
#undef INCISE_RANDOM_FIELD
    if (i % 200 == 199) {
      MetadataDelta delta = testMetadata(time, static_cast<uint32_t>(100 + i));
      expected.metadata.push_back(delta);
      (*writer)->addMetadata(std::move(delta));
      Status flushed = (*writer)->flush();
      EXPECT_TRUE(flushed) << flushed.message();
    }
  }
  expected.end_time = time + 1;
  if (close) {
    Status closed = (*writer)->close(expected.end_time);
    EXPECT_TRUE(closed) << closed.message();
  } else {
    Status flushed = (*writer)->flush();
    EXPECT_TRUE(flushed) << flushed.message();
  }
  return expected;
}

// Every row of `kind` the reader can decode, in file order; chunks that fail
// are skipped and counted in `failures`.
inline std::vector<std::vector<uint64_t>> readRows(const Reader& reader, EventKind kind,
                                                   size_t* failures = nullptr) {
  std::vector<std::vector<uint64_t>> out;
  for (const auto& ref : reader.chunks(kind)) {
    Result<Chunk> chunk = reader.readChunk(ref, ColumnSet::all());
    if (!chunk) {
      if (failures) ++*failures;
      continue;
    }
    const KindSpec* spec = kindSpec(kind);
    for (size_t i = 0; i < chunk->rows(); ++i) {
      std::vector<uint64_t> row;
      // A column the file does not have (an older writer's) reads as 0.
      for (unsigned c = 0; c < spec->column_count; ++c) {
        std::span<const uint64_t> column = chunk->column(c);
        row.push_back(i < column.size() ? column[i] : 0);
      }
      out.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace incise::format::test_support
