// Damaged files: truncation at every block boundary and inside blocks, and
// single-bit flips everywhere. The reader recovers every complete block and
// reports the damage; it never crashes.
#include <gtest/gtest.h>

#include <random>

#include "format/file_layout.h"
#include "tests/format/trace_fixture.h"

namespace incise::format {
namespace {

using test_support::readFile;
using test_support::readRows;
using test_support::TempDir;
using test_support::writeFile;
using test_support::writeRandomTrace;

struct Layout {
  std::string bytes;
  std::vector<ChunkRef> blocks;  // from the intact file, in file order
  uint64_t header_end = 0;
  uint64_t footer_offset = 0;
};

Layout makeTrace(const TempDir& dir, uint64_t seed) {
  Layout layout;
  std::string path = dir.path("intact.trace");
  writeRandomTrace(path, seed, WriterOptions{.rows_per_chunk = 40, .background = false}, 240);
  layout.bytes = readFile(path);
  auto reader = Reader::open(path);
  EXPECT_TRUE(reader);
  if (!reader) return layout;
  EXPECT_TRUE((*reader)->recovery().clean());
  layout.blocks = (*reader)->blocks();
  layout.header_end = layout.blocks[0].offset + kBlockHeaderSize + layout.blocks[0].length;
  layout.footer_offset = layout.bytes.size() - kTrailerSize;  // refined below
  const ChunkRef& last = layout.blocks.back();
  layout.footer_offset = last.offset + kBlockHeaderSize + last.length;
  return layout;
}

uint64_t blockEnd(const ChunkRef& ref) {
  return ref.offset + kBlockHeaderSize + ref.length;
}

// Rows in event blocks that end at or before `cut`.
uint64_t rowsBefore(const Layout& layout, uint64_t cut) {
  uint64_t rows = 0;
  for (const auto& ref : layout.blocks) {
    if (ref.block_type == BlockType::kEventChunk && blockEnd(ref) <= cut) rows += ref.rows;
  }
  return rows;
}

uint64_t totalRows(const Reader& reader) {
  uint64_t rows = 0;
  for (EventKind kind : kAllEventKinds) rows += readRows(reader, kind).size();
  return rows;
}

TEST(Recovery, TruncationAtEveryBlockBoundary) {
  TempDir dir;
  Layout layout = makeTrace(dir, 11);
  ASSERT_GT(layout.blocks.size(), 20u);
  std::string cut_path = dir.path("cut.trace");
  for (const auto& ref : layout.blocks) {
    for (uint64_t cut : {ref.offset, blockEnd(ref)}) {
      SCOPED_TRACE("cut at " + std::to_string(cut));
      writeFile(cut_path, layout.bytes.substr(0, cut));
      auto reader = Reader::open(cut_path);
      if (cut < layout.header_end) {
        EXPECT_FALSE(reader);  // no header: nothing to salvage
        continue;
      }
      ASSERT_TRUE(reader) << reader.error().message();
      const RecoveryReport& report = (*reader)->recovery();
      EXPECT_FALSE(report.used_footer);
      EXPECT_FALSE(report.why_scanned.empty());
      EXPECT_TRUE(report.damage.empty()) << report.damage[0].reason;
      EXPECT_EQ(totalRows(**reader), rowsBefore(layout, cut));
    }
  }
}

TEST(Recovery, TruncationInsideBlocks) {
  TempDir dir;
  Layout layout = makeTrace(dir, 12);
  std::mt19937_64 rng(12);
  std::string cut_path = dir.path("cut.trace");
  for (size_t i = 1; i < layout.blocks.size(); ++i) {
    const ChunkRef& ref = layout.blocks[i];
    for (int round = 0; round < 3; ++round) {
      uint64_t cut = ref.offset + 1 + rng() % (kBlockHeaderSize + ref.length - 1);
      SCOPED_TRACE("cut at " + std::to_string(cut) + " in block at " + std::to_string(ref.offset));
      writeFile(cut_path, layout.bytes.substr(0, cut));
      auto reader = Reader::open(cut_path);
      ASSERT_TRUE(reader) << reader.error().message();
      const RecoveryReport& report = (*reader)->recovery();
      EXPECT_FALSE(report.used_footer);
      ASSERT_EQ(report.damage.size(), 1u);
      EXPECT_EQ(report.damage[0].offset, ref.offset);
      EXPECT_EQ(report.damage[0].length, cut - ref.offset);
      EXPECT_EQ(report.first_damage, ref.offset);
      EXPECT_NE(report.damage[0].reason.find("truncated"), std::string::npos)
          << report.damage[0].reason;
      EXPECT_EQ(totalRows(**reader), rowsBefore(layout, cut));
    }
  }
}

TEST(Recovery, MissingTrailerStillFindsEveryBlock) {
  TempDir dir;
  Layout layout = makeTrace(dir, 13);
  std::string path = dir.path("cut.trace");
  writeFile(path, layout.bytes.substr(0, layout.bytes.size() - kTrailerSize));
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  EXPECT_FALSE((*reader)->recovery().used_footer);
  EXPECT_TRUE((*reader)->recovery().damage.empty());
  EXPECT_EQ(totalRows(**reader), rowsBefore(layout, layout.bytes.size()));
  EXPECT_GT((*reader)->stacks().size(), 0u);
}

TEST(Recovery, GarbageInTheMiddleIsSkippedAndReported) {
  TempDir dir;
  Layout layout = makeTrace(dir, 14);
  const ChunkRef& victim = layout.blocks[layout.blocks.size() / 2];
  std::string bytes = layout.bytes;
  // Overwrite the victim's header and part of its payload; drop the trailer.
  for (uint64_t i = victim.offset; i < victim.offset + 30 && i < bytes.size(); ++i) bytes[i] = 'Z';
  bytes.resize(bytes.size() - kTrailerSize);
  std::string path = dir.path("bad.trace");
  writeFile(path, bytes);
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message();
  const RecoveryReport& report = (*reader)->recovery();
  ASSERT_EQ(report.damage.size(), 1u);
  EXPECT_EQ(report.damage[0].offset, victim.offset);
  EXPECT_EQ(report.damage[0].length, kBlockHeaderSize + victim.length);
  uint64_t expected = rowsBefore(layout, layout.bytes.size()) -
                      (victim.block_type == BlockType::kEventChunk ? victim.rows : 0);
  EXPECT_EQ(totalRows(**reader), expected);
}

// Flips one bit at `position`; the result must be a clean error or a usable
// reader whose every chunk either decodes or fails with a message.
void flipAndRead(const Layout& layout, const std::string& path, uint64_t position, int bit,
                 uint64_t* opened, uint64_t* salvaged) {
  std::string bytes = layout.bytes;
  bytes[position] = static_cast<char>(bytes[position] ^ (1 << bit));
  writeFile(path, bytes);
  auto reader = Reader::open(path);
  if (!reader) {
    EXPECT_FALSE(reader.error().message().empty());
    return;
  }
  ++*opened;
  if (!(*reader)->recovery().used_footer) ++*salvaged;
  for (const auto& ref : (*reader)->blocks()) {
    if (ref.block_type != BlockType::kEventChunk) continue;
    auto chunk = (*reader)->readChunk(ref, ColumnSet::all());
    if (!chunk) {
      EXPECT_NE(chunk.error().message().find("offset"), std::string::npos);
    }
  }
}

TEST(Recovery, BitFlipsInHeaderFooterAndTrailerNeverCrash) {
  TempDir dir;
  Layout layout = makeTrace(dir, 15);
  std::string path = dir.path("flip.trace");
  uint64_t opened = 0, salvaged = 0;
  // Every byte of the magic and header block, and of the footer and trailer.
  for (uint64_t p = 0; p < layout.header_end; ++p) {
    flipAndRead(layout, path, p, static_cast<int>(p % 8), &opened, &salvaged);
  }
  uint64_t footer_opened = opened;
  for (uint64_t p = layout.footer_offset; p < layout.bytes.size(); ++p) {
    flipAndRead(layout, path, p, static_cast<int>(p % 8), &opened, &salvaged);
  }
  // A damaged footer or trailer always leaves a file the scan can read whole.
  EXPECT_EQ(opened - footer_opened, layout.bytes.size() - layout.footer_offset);
  EXPECT_GT(salvaged, 0u);
}

TEST(Recovery, BitFlipsInPayloadsAreCaughtByChecksums) {
  TempDir dir;
  Layout layout = makeTrace(dir, 16);
  std::string path = dir.path("flip.trace");
  std::mt19937_64 rng(16);
  for (size_t i = 1; i < layout.blocks.size(); ++i) {
    const ChunkRef& ref = layout.blocks[i];
    for (int round = 0; round < 4; ++round) {
      uint64_t p = ref.offset + rng() % (kBlockHeaderSize + ref.length);
      SCOPED_TRACE("flip at " + std::to_string(p));
      std::string bytes = layout.bytes;
      bytes[p] = static_cast<char>(bytes[p] ^ (1 << (rng() % 8)));
      writeFile(path, bytes);
      auto reader = Reader::open(path);
      ASSERT_TRUE(reader) << reader.error().message();
      if (ref.block_type == BlockType::kEventChunk) {
        // The footer still indexes the chunk; reading it names the damage.
        auto chunk = (*reader)->readChunk(ref, ColumnSet::all());
        ASSERT_FALSE(chunk);
        EXPECT_NE(chunk.error().message().find("block at offset " + std::to_string(ref.offset)),
                  std::string::npos)
            << chunk.error().message();
      } else {
        // Stack and metadata blocks are read at open: the damage forces a scan.
        EXPECT_FALSE((*reader)->recovery().used_footer);
        ASSERT_FALSE((*reader)->recovery().damage.empty());
        EXPECT_EQ((*reader)->recovery().damage[0].offset, ref.offset);
      }
    }
  }
}

}  // namespace
}  // namespace incise::format
