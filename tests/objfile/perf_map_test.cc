#include "objfile/perf_map.h"

#include <gtest/gtest.h>

#include <random>

namespace incise::objfile {
namespace {

TEST(PerfMap, ParsesNamesWithSpacesAndKeepsFileOrder) {
  const std::string text =
      "3ef0a9c0 2c LazyCompile:~processTicksAndRejections node:internal/process:67\n"
      "0x7f0000001000 0x100 Builtin: ArgumentsAdaptorTrampoline\r\n"
      "3ef0a9c0 10 LazyCompile:*reused address\n"
      "zz 10 bad_start\n"
      "1000 yy bad_size\n"
      "2000 10\n"
      "3000 0 zero_size\n"
      "ffffffffffffffff 2 overflows\n"
      "12345678901234567 1 too_many_digits\n";
  TextParseCounts counts;
  std::vector<format::PerfMapEntry> entries = parsePerfMap(text, &counts);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].start, 0x3ef0a9c0u);
  EXPECT_EQ(entries[0].size, 0x2cu);
  EXPECT_EQ(entries[0].name, "LazyCompile:~processTicksAndRejections node:internal/process:67");
  EXPECT_EQ(entries[1].start, 0x7f0000001000u);
  EXPECT_EQ(entries[1].name, "Builtin: ArgumentsAdaptorTrampoline");
  EXPECT_EQ(entries[2].name, "LazyCompile:*reused address");
  EXPECT_EQ(counts.lines, 9u);
  EXPECT_EQ(counts.malformed, 5u);
  EXPECT_EQ(counts.ignored, 1u);
}

TEST(PerfMap, RandomBytesNeverCrash) {
  std::mt19937 random(11);
  for (int round = 0; round < 200; ++round) {
    std::string text(random() % 512, '\0');
    for (char& c : text) c = static_cast<char>(random() % 5 == 0 ? '\n' : random());
    TextParseCounts counts;
    std::vector<format::PerfMapEntry> entries = parsePerfMap(text, &counts);
    EXPECT_EQ(entries.size() + counts.malformed + counts.ignored, counts.lines);
  }
}

}  // namespace
}  // namespace incise::objfile
