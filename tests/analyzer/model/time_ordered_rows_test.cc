#include "analyzer/model/time_ordered_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <utility>

#include "format/file_layout.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
namespace {
using testing::TraceBuilder;

std::unique_ptr<Trace> open(const std::string& path, unsigned threads = 0) {
  TraceOptions options;
  options.progress = false;
  options.threads = threads;
  auto trace = Trace::open(path, options);
  EXPECT_TRUE(trace) << trace.error().message();
  return trace ? trace.take() : nullptr;
}

using TimeAndTid = std::pair<uint64_t, uint64_t>;

std::vector<TimeAndTid> streamed(TimeOrderedRows<format::CpuSample>& rows) {
  std::vector<TimeAndTid> out;
  for (const format::CpuSample* s; (s = rows.peek()) != nullptr; rows.pop()) {
    out.emplace_back(s->time, s->tid);
  }
  return out;
}

// The reference merge: every row in file order, stable-sorted by time.
std::vector<TimeAndTid> stableSortedFileOrder(Trace& trace) {
  std::vector<TimeAndTid> out;
  trace.forEachRow<format::CpuSample>(
      [&](const format::CpuSample& s) { out.emplace_back(s.time, s.tid); });
  std::stable_sort(out.begin(), out.end(),
                   [](const TimeAndTid& a, const TimeAndTid& b) { return a.first < b.first; });
  return out;
}

// Chunks of 4 rows written out of time order, overlapping each other, one
// not sorted inside, with ties across chunks told apart by tid (the row's
// position in the file).
TEST(TimeOrderedRowsTest, OverlappingChunksOutOfOrderMergeLikeAStableSortOfTheFile) {
  TraceBuilder b;
  b.setRowsPerChunk(4);
  uint64_t stack = b.stack({"main"});
  const uint64_t times[] = {100, 110, 120, 130,   // a late chunk first
                            0,   10,  20,  30,    //
                            15,  25,  100, 35,    // overlaps both, unsorted inside
                            10,  10,  10,  200};  // ties with the second chunk
  uint32_t tid = 1;
  for (uint64_t t : times) b.sample(t, tid++, stack);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  for (unsigned threads : {1u, 2u}) {
    auto trace = open(*path, threads);
    ASSERT_TRUE(trace);
    std::vector<TimeAndTid> expected = stableSortedFileOrder(*trace);
    ASSERT_EQ(expected.size(), 16u);
    TimeOrderedRows<format::CpuSample> rows(*trace, true, LookAhead::kAlways);
    EXPECT_EQ(streamed(rows), expected) << "threads " << threads;
    EXPECT_EQ(rows.heldRows(), 0u);
    EXPECT_EQ(rows.outOfOrderRows(), 0u);
    // Both passes count their rows as used.
    EXPECT_EQ(trace->losses().used_by_kind.at("cpu_sample"), 32u);
  }
}

TEST(TimeOrderedRowsTest, RowsAtOneTimeKeepFileOrderAcrossChunks) {
  TraceBuilder b;
  b.setRowsPerChunk(3);
  uint64_t stack = b.stack({"main"});
  for (uint32_t tid = 1; tid <= 12; ++tid) b.sample(500, tid, stack);
  auto path = b.write();
  ASSERT_TRUE(path);
  auto trace = open(*path);
  TimeOrderedRows<format::CpuSample> rows(*trace);
  std::vector<TimeAndTid> out = streamed(rows);
  ASSERT_EQ(out.size(), 12u);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].second, i + 1) << i;
}

TEST(TimeOrderedRowsTest, FilteredRowsAreSkippedAndCountedAsUsedOnlyWhenKept) {
  TraceBuilder b;
  b.setRowsPerChunk(5);
  uint64_t stack = b.stack({"main"});
  for (uint64_t i = 0; i < 40; ++i) b.sample(1000 - i * 10, 1 + i % 4, stack);
  auto path = b.write();
  ASSERT_TRUE(path);
  TraceOptions options;
  options.progress = false;
  options.filter.tids = {2};
  auto trace = Trace::open(*path, options);
  ASSERT_TRUE(trace);
  TimeOrderedRows<format::CpuSample> rows(**trace);
  std::vector<TimeAndTid> out = streamed(rows);
  ASSERT_EQ(out.size(), 10u);
  EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
  for (const auto& [time, tid] : out) EXPECT_EQ(tid, 2u);
  EXPECT_EQ((*trace)->losses().used_by_kind.at("cpu_sample"), 10u);
}

TEST(TimeOrderedRowsTest, DamagedChunkIsSkippedAndCounted) {
  TraceBuilder b;
  b.setRowsPerChunk(10);
  uint64_t stack = b.stack({"main"});
  for (uint64_t i = 0; i < 30; ++i) b.sample(i, 7, stack);
  auto path = b.write();
  ASSERT_TRUE(path);
  {
    auto reader = format::Reader::open(*path);
    ASSERT_TRUE(reader);
    std::vector<format::ChunkRef> refs = (*reader)->chunks(format::EventKind::kCpuSample);
    ASSERT_EQ(refs.size(), 3u);
    std::fstream file(*path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(refs[1].offset + format::kBlockHeaderSize +
                                           refs[1].length - 1));
    file.put('\x5a');
    file.seekp(static_cast<std::streamoff>(refs[1].offset + format::kBlockHeaderSize + 2));
    file.put('\x5a');
  }
  auto trace = open(*path);
  ASSERT_TRUE(trace);
  TimeOrderedRows<format::CpuSample> rows(*trace, true, LookAhead::kAlways);
  std::vector<TimeAndTid> out = streamed(rows);
  ASSERT_EQ(out.size(), 20u);
  EXPECT_EQ(out[9].first, TraceBuilder::kStartNs + 9);
  EXPECT_EQ(out[10].first, TraceBuilder::kStartNs + 20);  // the middle chunk's rows are gone
  LossSummary losses = trace->losses();
  EXPECT_EQ(losses.damaged_chunks, 1u);
  EXPECT_EQ(losses.used_by_kind.at("cpu_sample"), 20u);
}

// Chunks one after the other in time: only one is held at a time (the one
// decoded ahead is not counted: it is not a run yet). Chunks
// that all span the whole trace: every row is held, as a sort would.
TEST(TimeOrderedRowsTest, HoldsOnlyTheChunksOverlappingTheMergeTime) {
  const uint64_t chunks = 50, per_chunk = 8;
  TraceBuilder sequential, overlapping;
  sequential.setRowsPerChunk(per_chunk);
  overlapping.setRowsPerChunk(per_chunk);
  uint64_t s1 = sequential.stack({"main"}), s2 = overlapping.stack({"main"});
  for (uint64_t c = 0; c < chunks; ++c) {
    for (uint64_t i = 0; i < per_chunk; ++i) {
      sequential.sample(c * per_chunk + i, 1, s1);
      overlapping.sample(i * chunks + c, 1, s2);
    }
  }
  auto sequential_path = sequential.write(), overlapping_path = overlapping.write();
  ASSERT_TRUE(sequential_path && overlapping_path);
  for (unsigned threads : {1u, 2u}) {
    auto trace = open(*sequential_path, threads);
    TimeOrderedRows<format::CpuSample> rows(*trace, true, LookAhead::kAlways);
    size_t n = 0;
    for (; rows.peek(); rows.pop()) {
      ++n;
      EXPECT_LE(rows.heldRows(), per_chunk);
    }
    EXPECT_EQ(n, chunks * per_chunk);
    EXPECT_EQ(rows.maxHeldRows(), per_chunk);

    auto worst = open(*overlapping_path, threads);
    TimeOrderedRows<format::CpuSample> all(*worst, true, LookAhead::kAlways);
    std::vector<TimeAndTid> out = streamed(all);
    EXPECT_EQ(out.size(), chunks * per_chunk);
    EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
    EXPECT_EQ(all.maxHeldRows(), chunks * per_chunk);
  }
}

TEST(TimeOrderedRowsTest, EmptyKindEndsAtOnce) {
  TraceBuilder b;
  uint64_t stack = b.stack({"main"});
  b.sample(5, 1, stack);
  auto path = b.write();
  ASSERT_TRUE(path);
  auto trace = open(*path);
  TimeOrderedRows<format::Wakeup> rows(*trace);
  EXPECT_EQ(rows.peek(), nullptr);
  rows.pop();  // harmless at the end
  EXPECT_EQ(rows.maxHeldRows(), 0u);
}

}  // namespace
}  // namespace incise::analyzer
