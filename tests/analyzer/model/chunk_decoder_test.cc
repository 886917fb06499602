#include "analyzer/model/chunk_decoder.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
namespace {
using testing::TraceBuilder;

// Small traces are decoded on the calling thread (kParallelRows); a zero
// threshold forces the worker pipeline so its ordering is what is tested.
TEST(ChunkDecoderTest, WorkersHandChunksBackInFileOrder) {
  TraceBuilder b;
  b.setRowsPerChunk(7);
  uint64_t stack = b.stack({"main"});
  for (uint64_t i = 0; i < 1000; ++i) b.sample(i * 10, 101, stack, i % 2);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  auto reader = format::Reader::open(*path);
  ASSERT_TRUE(reader) << reader.error().message();
  std::vector<format::ChunkRef> refs = (*reader)->chunks(format::EventKind::kCpuSample);
  ASSERT_GT(refs.size(), 100u);
  for (unsigned threads : {2u, 8u}) {
    ChunkDecoder decoder(**reader, threads, /*parallel_rows=*/0);
    std::vector<std::thread::id> consumers;
    std::vector<uint64_t> times;
    decoder.run(
        refs, format::ColumnSet::all(),
        [&](const format::ChunkRef&, const format::Chunk& chunk) {
          consumers.push_back(std::this_thread::get_id());
          for (size_t i = 0; i < chunk.rows(); ++i) {
            times.push_back(chunk.row<format::CpuSample>(i).time);
          }
        },
        [](const format::ChunkRef&, const Error& e) { ADD_FAILURE() << e.message(); });
    ASSERT_EQ(times.size(), 1000u) << threads;
    for (size_t i = 0; i < times.size(); ++i) {
      ASSERT_EQ(times[i], TraceBuilder::kStartNs + i * 10) << "threads " << threads << " row " << i;
    }
    for (auto id : consumers) EXPECT_EQ(id, std::this_thread::get_id());
  }
}

// Unwinding (a `prepare`) is costly per row, so it keeps the workers even
// when the run is below the row threshold.
TEST(ChunkDecoderTest, PrepareRunsOnWorkersWhateverTheRowCount) {
  TraceBuilder b;
  b.setRowsPerChunk(7);
  uint64_t stack = b.stack({"main"});
  for (uint64_t i = 0; i < 100; ++i) b.sample(i * 10, 101, stack, 0);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  auto reader = format::Reader::open(*path);
  ASSERT_TRUE(reader) << reader.error().message();
  std::vector<format::ChunkRef> refs = (*reader)->chunks(format::EventKind::kCpuSample);
  ChunkDecoder decoder(**reader, 2);  // default threshold, far above 100 rows
  std::mutex mutex;
  std::set<std::thread::id> preparers;
  size_t rows = 0;
  decoder.run(
      refs, format::ColumnSet::all(),
      [&](format::Chunk&, unsigned) {
        std::lock_guard lock(mutex);
        preparers.insert(std::this_thread::get_id());
        return std::unique_ptr<ChunkDecoder::Prepared>();
      },
      [&](const format::ChunkRef&, const format::Chunk& chunk, ChunkDecoder::Prepared*) {
        rows += chunk.rows();
      },
      [](const format::ChunkRef&, const Error& e) { ADD_FAILURE() << e.message(); });
  EXPECT_EQ(rows, 100u);
  ASSERT_FALSE(preparers.empty());
  EXPECT_EQ(preparers.count(std::this_thread::get_id()), 0u);
}

}  // namespace
}  // namespace incise::analyzer
