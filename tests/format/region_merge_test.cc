// Small chunks merged after the fact (format/region_merge.h): the merged file
// reads the same rows, and a writer killed at any step of a merge leaves a
// file whose scan reads every row exactly once.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>

#include "format/block_io.h"
#include "format/file_layout.h"
#include "tests/format/trace_fixture.h"

namespace incise::format {
namespace {

using test_support::ExpectedTrace;
using test_support::readFile;
using test_support::readRows;
using test_support::TempDir;
using test_support::writeFile;
using test_support::writeRandomTrace;

// 2,000 rows a kind, a flush every 200: chunks of 200 rows, small next to
// 4,096, all in one region.
constexpr uint32_t kRowsPerChunk = 4096;
constexpr size_t kRowsPerKind = 2000;

WriterOptions options(bool merge) {
  return WriterOptions{
      .rows_per_chunk = kRowsPerChunk, .background = false, .merge_small_chunks = merge};
}

size_t eventChunks(const Reader& reader, EventKind kind) {
  return reader.chunks(kind).size();
}

void expectSameContent(const Reader& reader, const ExpectedTrace& expected,
                       const std::string& what) {
  for (EventKind kind : kAllEventKinds) {
    EXPECT_EQ(readRows(reader, kind), expected.rows.at(kind))
        << what << ": rows of " << kindName(kind);
  }
  for (const auto& [id, frames] : expected.stacks) {
    auto got = reader.stacks().frames(id);
    EXPECT_EQ(std::vector<uint64_t>(got.begin(), got.end()), frames) << what << ": stack " << id;
  }
  EXPECT_EQ(reader.metadata().processes.size(), expected.metadata.size()) << what;
}

TEST(RegionMerge, AMergedFileReadsTheSameRowsInOneChunkPerKind) {
  TempDir dir;
  ExpectedTrace expected = writeRandomTrace(dir.path("m.trace"), 7, options(true), kRowsPerKind);
  writeRandomTrace(dir.path("u.trace"), 7, options(false), kRowsPerKind);
  auto merged = Reader::open(dir.path("m.trace"));
  auto unmerged = Reader::open(dir.path("u.trace"));
  ASSERT_TRUE(merged) << merged.error().message();
  ASSERT_TRUE(unmerged) << unmerged.error().message();
  EXPECT_TRUE((*merged)->recovery().clean());
  expectSameContent(**merged, expected, "merged");
  expectSameContent(**unmerged, expected, "unmerged");
  for (EventKind kind : kAllEventKinds) {
    EXPECT_EQ(eventChunks(**unmerged, kind), kRowsPerKind / 200) << kindName(kind);
    EXPECT_EQ(eventChunks(**merged, kind), 1u) << kindName(kind);
  }
  EXPECT_LT(readFile(dir.path("m.trace")).size(), readFile(dir.path("u.trace")).size());
}

TEST(RegionMerge, RegionsMergeOneAfterAnother) {
  TempDir dir;
  // Chunks of up to 3,300 rows (200-row flushes are small below 3,300 / 16):
  // 6,000 rows a kind merge into 3,200 and 2,800.
  WriterOptions small{.rows_per_chunk = 3300, .background = false};
  ExpectedTrace expected = writeRandomTrace(dir.path("m.trace"), 5, small, 6000);
  auto reader = Reader::open(dir.path("m.trace"));
  ASSERT_TRUE(reader) << reader.error().message();
  EXPECT_TRUE((*reader)->recovery().clean());
  expectSameContent(**reader, expected, "merged");
  for (EventKind kind : kAllEventKinds)
    EXPECT_EQ(eventChunks(**reader, kind), 2u) << kindName(kind);
}

TEST(RegionMerge, ChunksAlreadyLargeAreLeftAlone) {
  TempDir dir;
  // A flush every 200 rows against 400-row chunks: no chunk is small, and
  // each large one ends the region before it (its metadata delta alone).
  WriterOptions large{.rows_per_chunk = 400, .background = false};
  writeRandomTrace(dir.path("m.trace"), 3, large, 1000);
  large.merge_small_chunks = false;
  writeRandomTrace(dir.path("u.trace"), 3, large, 1000);
  EXPECT_EQ(readFile(dir.path("m.trace")), readFile(dir.path("u.trace")));
}

// The bytes of each step of a merge, from two real files: the region as the
// flushes left it (merging off, not closed) and as a merge rewrites it.
struct MergeSteps {
  std::string unmerged;  // magic, header, the region's small chunks
  std::string merged;    // the merged blocks
  uint64_t start = 0;    // where the region starts (after the header block)
  std::string copy;      // the kRegionCopy block the writer appends first
};

MergeSteps mergeSteps(const TempDir& dir, ExpectedTrace& expected) {
  MergeSteps steps;
  expected = writeRandomTrace(dir.path("u.trace"), 11, options(false), kRowsPerKind,
                              /*close=*/false);
  writeRandomTrace(dir.path("m.trace"), 11, options(true), kRowsPerKind);
  steps.unmerged = readFile(dir.path("u.trace"));
  std::string closed = readFile(dir.path("m.trace"));
  auto reader = Reader::open(dir.path("m.trace"));
  EXPECT_TRUE(reader);
  if (!reader) return steps;
  const auto& blocks = (*reader)->blocks();
  steps.start = blocks[0].offset + kBlockHeaderSize + blocks[0].length;
  uint64_t footer = closed.size() - kTrailerSize;
  footer = getU64(reinterpret_cast<const uint8_t*>(closed.data()) + footer);
  steps.merged = closed.substr(steps.start, footer - steps.start);
  EXPECT_EQ(closed.substr(0, steps.start), steps.unmerged.substr(0, steps.start));

  std::string payload(kRegionCopyPrefix, '\0');
  putU64(reinterpret_cast<uint8_t*>(payload.data()), steps.start);
  putU64(reinterpret_cast<uint8_t*>(payload.data()) + 8, steps.unmerged.size());
  payload += steps.merged;
  auto header = encodeBlockHeader(BlockType::kRegionCopy, codecs::asBytes(payload));
  steps.copy.assign(reinterpret_cast<const char*>(header.data()), header.size());
  steps.copy += payload;
  return steps;
}

TEST(RegionMerge, AKillAtAnyStepOfAMergeLeavesEveryRowOnce) {
  TempDir dir;
  ExpectedTrace expected;
  MergeSteps steps = mergeSteps(dir, expected);
  ASSERT_FALSE(steps.merged.empty());
  ASSERT_LT(steps.merged.size(), steps.unmerged.size() - steps.start);
  std::string path = dir.path("killed.trace");
  auto check = [&](const std::string& bytes, const std::string& what, bool copy_used) {
    writeFile(path, bytes);
    auto reader = Reader::open(path);
    ASSERT_TRUE(reader) << what << ": " << reader.error().message();
    expectSameContent(**reader, expected, what);
    EXPECT_EQ((*reader)->recovery().regions_from_copies, copy_used ? 1u : 0u) << what;
  };

  // 1. Killed while appending the copy: the small chunks are read, the
  //    torn copy is reported.
  for (size_t cut : {size_t{1}, size_t{30}, steps.copy.size() / 2, steps.copy.size() - 1}) {
    check(steps.unmerged + steps.copy.substr(0, cut), "copy cut at " + std::to_string(cut), false);
  }
  // 2. The copy is whole; killed before or while overwriting the region.
  std::mt19937_64 rng(5);
  std::vector<size_t> written = {0, 1, 24, steps.merged.size()};
  for (int i = 0; i < 12; ++i) written.push_back(rng() % steps.merged.size());
  for (size_t n : written) {
    std::string bytes = steps.unmerged + steps.copy;
    bytes.replace(steps.start, n, steps.merged.substr(0, n));
    check(bytes, std::to_string(n) + " merged bytes in place", true);
  }
  // 3. Truncated after the merged blocks (closing would write the footer).
  check(steps.unmerged.substr(0, steps.start) + steps.merged, "merged and truncated", false);
}

// A writer child killed at random moments, merging every few flushes: its
// file has every row it said was flushed, each once, in order.
TEST(RegionMerge, ARecorderKilledAtRandomMomentsLosesOnlyUnflushedRows) {
  TempDir dir;
  std::mt19937_64 rng(42);
  for (int round = 0; round < 12; ++round) {
    std::string path = dir.path("k" + std::to_string(round) + ".trace");
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(fds[0]);
      auto writer =
          Writer::create(path, test_support::testHeader(), WriterOptions{.rows_per_chunk = 256});
      if (!writer) _exit(2);
      for (uint64_t row = 0; row < 2'000'000;) {
        for (int i = 0; i < 10; ++i, ++row) {
          (*writer)->append(CpuSample{.time = 1000 + row, .cpu = row % 2, .pid = 7, .tid = 7});
        }
        if (!(*writer)->flush()) _exit(3);
        if (write(fds[1], &row, sizeof(row)) != sizeof(row)) _exit(4);
      }
      _exit(0);
    }
    close(fds[1]);
    uint64_t flushed = 0, value = 0;
    ASSERT_EQ(read(fds[0], &flushed, sizeof(flushed)), ssize_t{sizeof(flushed)});
    usleep(static_cast<useconds_t>(rng() % 40000));
    kill(child, SIGKILL);
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    while (read(fds[0], &value, sizeof(value)) == sizeof(value)) flushed = value;
    close(fds[0]);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "the child finished before the kill; status " << wstatus;

    auto reader = Reader::open(path);
    ASSERT_TRUE(reader) << reader.error().message();
    auto rows = readRows(**reader, EventKind::kCpuSample);
    ASSERT_GE(rows.size(), flushed) << "round " << round;
    for (size_t i = 0; i < rows.size(); ++i) {
      ASSERT_EQ(rows[i][0], 1000 + i)
          << "round " << round << ": row " << i << " of " << rows.size();
    }
  }
}

}  // namespace
}  // namespace incise::format
