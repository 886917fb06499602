// Cap'n Proto traversal and nesting limits against crafted metadata: a
// 40-byte block claiming 60 million processes, one text read through
// thousands of overlapping pointers, a nesting limit; each is a clean Error
// (and a file holding one is salvaged around it), never gigabytes of memory.
#include <capnp/schema.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "format/block_io.h"
#include "format/file_layout.h"
#include "format/metadata_codec.h"
#include "format/reader.h"
#include "format/writer.h"
#include "schemas/trace.capnp.h"

namespace incise::format {
namespace {

// Wire format pointers (capnproto.org/encoding.html).
uint64_t structPointer(int32_t offset_words, uint16_t data_words, uint16_t pointers) {
  return uint64_t{static_cast<uint32_t>(offset_words) << 2} | uint64_t{data_words} << 32 |
         uint64_t{pointers} << 48;
}
enum ElementSize : uint8_t { kByte = 2, kPointer = 6, kInlineComposite = 7 };
uint64_t listPointer(int32_t offset_words, ElementSize size, uint32_t count) {
  return 1 | uint64_t{static_cast<uint32_t>(offset_words) << 2} | uint64_t{size} << 32 |
         uint64_t{count} << 35;
}

struct DeltaLayout {
  uint16_t data_words;
  uint16_t pointers;
  uint32_t processes;  // pointer slot of each list
  uint32_t notes;
};

DeltaLayout deltaLayout() {
  auto schema = capnp::Schema::from<schema::MetadataDelta>();
  auto node = schema.getProto().getStruct();
  return {node.getDataWordCount(), node.getPointerCount(),
          schema.getFieldByName("processes").getProto().getSlot().getOffset(),
          schema.getFieldByName("notes").getProto().getSlot().getOffset()};
}

// A flat single-segment message: segment table, then `segment`.
std::string flat(const std::vector<uint64_t>& segment) {
  std::string bytes(8 + segment.size() * 8, '\0');
  auto* p = reinterpret_cast<uint8_t*>(bytes.data());
  putU32(p, 0);
  putU32(p + 4, static_cast<uint32_t>(segment.size()));
  for (size_t i = 0; i < segment.size(); ++i) putU64(p + 8 + 8 * i, segment[i]);
  return bytes;
}

// MetadataDelta whose processes list holds `count` structs of zero words:
// the whole message is 5 + 1 + 1 + 7 + 1 words whatever `count` is.
std::string hugeEmptyStructList(uint32_t count) {
  DeltaLayout d = deltaLayout();
  std::vector<uint64_t> words(1 + d.data_words + d.pointers + 1, 0);
  words[0] = structPointer(0, d.data_words, d.pointers);
  size_t slot = 1 + d.data_words + d.processes;
  size_t tag = 1 + d.data_words + d.pointers;
  words[slot] = listPointer(static_cast<int32_t>(tag - slot - 1), kInlineComposite, 0);
  words[tag] = structPointer(static_cast<int32_t>(count), 0, 0);
  return flat(words);
}

// MetadataDelta whose notes are `count` pointers to one text of `text_bytes`.
std::string overlappingTexts(uint32_t count, uint32_t text_bytes) {
  DeltaLayout d = deltaLayout();
  size_t list = 1 + d.data_words + d.pointers;
  size_t text = list + count;
  std::vector<uint64_t> words(text + (text_bytes + 7) / 8, 0x4141414141414141ull);
  for (size_t i = 0; i < list; ++i) words[i] = 0;
  words[0] = structPointer(0, d.data_words, d.pointers);
  size_t slot = 1 + d.data_words + d.notes;
  words[slot] = listPointer(static_cast<int32_t>(list - slot - 1), kPointer, count);
  for (size_t i = 0; i < count; ++i) {
    words[list + i] = listPointer(static_cast<int32_t>(text - (list + i) - 1), kByte, text_bytes);
  }
  // Text must end in NUL.
  words[text + (text_bytes - 1) / 8] &= ~(uint64_t{0xff} << (8 * ((text_bytes - 1) % 8)));
  return flat(words);
}

size_t peakRssKb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<size_t>(usage.ru_maxrss);
}

TEST(CapnpLimits, HugeListOfEmptyStructsIsAnErrorNotAnAllocation) {
  // Under the 64 Mi-word default traversal limit: only the amplification
  // bound (message words x 4) stops it.
  std::string bytes = hugeEmptyStructList(60'000'000);
  ASSERT_LT(bytes.size(), 200u);
  size_t rss_before = peakRssKb();
  Result<MetadataDelta> delta = decodeMetadata(codecs::asBytes(bytes), ReaderOptions{});
  ASSERT_FALSE(delta) << "decoded " << delta->processes.size() << " processes from " << bytes.size()
                      << " bytes";
  EXPECT_NE(delta.error().message().find("malformed Cap'n Proto message"), std::string::npos)
      << delta.error().message();
  EXPECT_LT(peakRssKb() - rss_before, 64u * 1024) << "KiB of peak RSS for a refused message";
  // A handful of empty structs is legal and decodes (defaults).
  Result<MetadataDelta> few = decodeMetadata(codecs::asBytes(hugeEmptyStructList(3)), {});
  ASSERT_TRUE(few) << few.error().message();
  EXPECT_EQ(few->processes.size(), 3u);
}

TEST(CapnpLimits, OneTextReadThroughThousandsOfPointersIsAnError) {
  // 4096 x 64 KiB = 256 MiB of strings from a 96 KiB message.
  std::string bytes = overlappingTexts(4096, 64 << 10);
  Result<MetadataDelta> delta = decodeMetadata(codecs::asBytes(bytes), ReaderOptions{});
  ASSERT_FALSE(delta) << "read " << delta->notes.size() << " notes";
  // Two pointers to one text is fine: twice the words is within the bound.
  Result<MetadataDelta> two = decodeMetadata(codecs::asBytes(overlappingTexts(2, 64 << 10)), {});
  ASSERT_TRUE(two) << two.error().message();
  EXPECT_EQ(two->notes.size(), 2u);
  EXPECT_EQ(two->notes[0].size(), (64u << 10) - 1);
}

MetadataDelta realisticDelta() {
  MetadataDelta d;
  d.time = 7;
  for (uint32_t p = 0; p < 50; ++p) {
    d.processes.push_back({p, 1, "comm", {"/bin/x", "--flag"}, 7});
    d.mappings.push_back({p, 0x1000, 0x2000, 0, "/usr/lib/libc.so.6", "id", 5, 7});
  }
  ObjectSymbols object;
  object.path = "/usr/lib/libc.so.6";
  for (uint32_t s = 0; s < 5000; ++s)
    object.symbols.push_back({s * 16u, 16, "f" + std::to_string(s)});
  object.segments.push_back({0, 0, 0x1000, 0x1000, 5});
  d.objects.push_back(object);
  d.notes = {"a", "b"};
  return d;
}

TEST(CapnpLimits, RealMetadataStaysWithinTheBoundsAndNestingIsLimited) {
  std::string bytes = encodeMetadata(realisticDelta());
  Result<MetadataDelta> back = decodeMetadata(codecs::asBytes(bytes), ReaderOptions{});
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->objects.at(0).symbols.size(), 5000u);
  // Objects -> symbols -> name is three levels below the root.
  ReaderOptions shallow;
  shallow.nesting_limit = 2;
  Result<MetadataDelta> refused = decodeMetadata(codecs::asBytes(bytes), shallow);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("malformed Cap'n Proto message"), std::string::npos);
}

TEST(CapnpLimits, ATraceWithACraftedMetadataBlockIsSalvagedAroundIt) {
  std::string path =
      (std::filesystem::temp_directory_path() / ("incise-crafted-" + std::to_string(getpid())))
          .string();
  {
    auto writer = Writer::create(path, Header{});
    ASSERT_TRUE(writer);
    (*writer)->append(CpuSample{.time = 10, .pid = 1, .tid = 1});
    ASSERT_TRUE((*writer)->flush());
  }  // no close: no footer, the reader scans
  std::string crafted = hugeEmptyStructList(60'000'000);
  auto header = encodeBlockHeader(BlockType::kMetadata, codecs::asBytes(crafted));
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out.write(reinterpret_cast<const char*>(header.data()), header.size());
    out.write(crafted.data(), static_cast<std::streamsize>(crafted.size()));
  }
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message();
  const RecoveryReport& recovery = (*reader)->recovery();
  ASSERT_EQ(recovery.damage.size(), 1u);
  EXPECT_NE(recovery.damage[0].reason.find("metadata"), std::string::npos)
      << recovery.damage[0].reason;
  EXPECT_EQ((*reader)->rows(EventKind::kCpuSample), 1u);
  EXPECT_TRUE((*reader)->metadata().processes.empty());
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace incise::format
