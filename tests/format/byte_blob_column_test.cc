// Byte-blob columns (Encoding::kBytes, format 1.1): golden bytes of the
// codec, hostile input, and cpu samples with user stack copies written and
// read back through a real file (many chunks, sealed by blob size).
#include <gtest/gtest.h>

#include <random>

#include "format/chunk_codec.h"
#include "format/codecs/byte_blob_codec.h"
#include "format/reader.h"
#include "format/writer.h"
#include "tests/format/trace_fixture.h"

namespace incise::format {
namespace {

using codecs::asBytes;
using codecs::decodeBlobs;
using codecs::encodeBlobs;

TEST(ByteBlobCodec, GoldenBytes) {
  std::string column;
  std::vector<uint64_t> lengths = {2, 0, 3};
  ASSERT_TRUE(encodeBlobs(lengths, "abxyz", column));
  EXPECT_EQ(column, std::string("\x02\x00\x03"
                                "abxyz",
                                8));
  std::vector<uint64_t> back;
  std::string bytes;
  ASSERT_TRUE(decodeBlobs(asBytes(column), 3, back, bytes));
  EXPECT_EQ(back, lengths);
  EXPECT_EQ(bytes, "abxyz");
}

TEST(ByteBlobCodec, LengthsInPlaceNameWhereTheBlobsStart) {
  std::string column;
  ASSERT_TRUE(encodeBlobs(std::vector<uint64_t>{2, 0, 300}, "ab" + std::string(300, 'z'), column));
  std::vector<uint64_t> lengths;
  Result<size_t> at = codecs::decodeBlobLengths(asBytes(column), 3, lengths);
  ASSERT_TRUE(at) << at.error().message();
  EXPECT_EQ(*at, 4u);  // 02 00 AC 02
  EXPECT_EQ(lengths, (std::vector<uint64_t>{2, 0, 300}));
  EXPECT_EQ(column.substr(*at, 2), "ab");
  EXPECT_FALSE(codecs::decodeBlobLengths(asBytes(column.substr(0, column.size() - 1)), 3, lengths));
}

TEST(ByteBlobColumn, BlobBuffersComeBackToThePool) {
  uint8_t* first = nullptr;
  {
    std::shared_ptr<uint8_t[]> buffer = acquireBlobBuffer(100000);
    ASSERT_NE(buffer, nullptr);
    buffer[99999] = 1;  // the whole size is usable
    first = buffer.get();
  }
  // Released: the next request of a size it can hold gets it back, warm.
  std::shared_ptr<uint8_t[]> again = acquireBlobBuffer(90000);
  EXPECT_EQ(again.get(), first);
  // While it is in use, another request gets another buffer.
  std::shared_ptr<uint8_t[]> other = acquireBlobBuffer(90000);
  EXPECT_NE(other.get(), first);
}

TEST(ByteBlobCodec, RejectsMismatchesAndHostileLengths) {
  std::string column;
  EXPECT_FALSE(encodeBlobs(std::vector<uint64_t>{4}, "abc", column));
  std::vector<uint64_t> lengths;
  std::string bytes;
  // Lengths claim more bytes than follow; fewer; a huge length; a cut varint.
  EXPECT_FALSE(decodeBlobs(asBytes(std::string("\x05"
                                               "abc",
                                               4)),
                           1, lengths, bytes));
  EXPECT_FALSE(decodeBlobs(asBytes(std::string("\x01"
                                               "abc",
                                               4)),
                           1, lengths, bytes));
  EXPECT_FALSE(decodeBlobs(asBytes(std::string("\xff\xff\xff\xff\x0f", 5)), 1, lengths, bytes));
  EXPECT_FALSE(decodeBlobs(asBytes(std::string("\x80", 1)), 1, lengths, bytes));
  EXPECT_FALSE(decodeBlobs(asBytes(std::string("\x00", 1)), 2, lengths, bytes));
  // Random garbage never crashes (ASan/UBSan in CI).
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string junk(rng() % 64, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    (void)decodeBlobs(asBytes(junk), rng() % 8, lengths, bytes);
  }
}

TEST(ByteBlobColumn, CpuSampleStackCopiesRoundTripAcrossChunks) {
  test_support::TempDir dir;
  std::string path = dir.path("blobs.trace");
  // Small blob limit: chunks are sealed by bytes long before their row count.
  WriterOptions options{.rows_per_chunk = 1000, .max_chunk_blob_bytes = 4096};
  auto writer = Writer::create(path, test_support::testHeader(), options);
  ASSERT_TRUE(writer) << writer.error().message();
  std::mt19937_64 rng(11);
  std::vector<std::string> copies;
  for (uint64_t i = 0; i < 300; ++i) {
    std::string copy(rng() % 900, '\0');
    for (char& c : copy) c = static_cast<char>(rng());
    if (i % 7 == 0) copy.clear();
    CpuSample row{.time = 1000 + i, .cpu = i % 2, .pid = 5, .tid = 6, .stack_id = 0, .weight = 1};
    row.user_ip = 0x401000 + i;
    row.user_sp = 0x7ffc0000 - i * 16;
    row.user_bp = 0x7ffc1000;
    row.user_stack = 123456;  // ignored: the length is the copy's size
    if (i % 5 == 4) {
      (*writer)->append(row);  // no copy
      copy.clear();
    } else {
      (*writer)->append(row, asBytes(copy));
    }
    copies.push_back(copy);
  }
  ASSERT_TRUE((*writer)->close(5000));

  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message();
  auto refs = (*reader)->chunks(EventKind::kCpuSample);
  EXPECT_GT(refs.size(), 10u);
  size_t row_index = 0;
  for (const auto& ref : refs) {
    auto chunk = (*reader)->readChunk(ref, ColumnSet::all());
    ASSERT_TRUE(chunk) << chunk.error().message();
    for (size_t i = 0; i < chunk->rows(); ++i, ++row_index) {
      CpuSample s = chunk->row<CpuSample>(i);
      const std::string& want = copies[row_index];
      EXPECT_EQ(s.user_ip, 0x401000 + row_index);
      EXPECT_EQ(s.user_stack, want.size());
      auto got = chunk->bytes(CpuSampleColumn::user_stack, i);
      ASSERT_EQ(got.size(), want.size());
      EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin(),
                             [](uint8_t a, char b) { return a == static_cast<uint8_t>(b); }));
    }
    EXPECT_TRUE(chunk->bytes(CpuSampleColumn::user_stack, chunk->rows()).empty());
    EXPECT_TRUE(chunk->bytes(CpuSampleColumn::time, 0).empty());
  }
  EXPECT_EQ(row_index, copies.size());

  // Not asking for the column: no bytes, the rest still there.
  auto chunk = (*reader)->readChunk(refs[0], {CpuSampleColumn::time});
  ASSERT_TRUE(chunk);
  EXPECT_TRUE(chunk->bytes(CpuSampleColumn::user_stack, 1).empty());
  EXPECT_EQ(chunk->row<CpuSample>(1).time, 1001u);
}

}  // namespace
}  // namespace incise::format
