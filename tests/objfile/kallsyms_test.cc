#include "objfile/kallsyms.h"

#include <gtest/gtest.h>

#include <random>

namespace incise::objfile {
namespace {

TEST(Kallsyms, ParsesTextSymbolsWithModulesSortedByAddress) {
  const std::string text =
      "ffffffffc0a01000 t ext4_fill_super\t[ext4]\n"
      "ffffffff81000000 T _stext\n"
      "ffffffff82000000 D some_data\n"
      "ffffffff81001000 W weak_function\r\n"
      "0000000000000000 T hidden_by_kptr_restrict\n"
      "not-hex T broken\n"
      "ffffffff81002000 TT two_letter_type\n"
      "ffffffff81003000 T\n"
      "ffffffff81004000 T name [unclosed\n"
      "\n"
      "ffffffff81000800 t local_function\n";
  TextParseCounts counts;
  std::vector<format::KernelSymbol> symbols = parseKallsyms(text, &counts);
  ASSERT_EQ(symbols.size(), 4u);
  EXPECT_EQ(symbols[0].address, 0xffffffff81000000u);
  EXPECT_EQ(symbols[0].name, "_stext");
  EXPECT_EQ(symbols[0].module, "");
  EXPECT_EQ(symbols[1].name, "local_function");
  EXPECT_EQ(symbols[2].name, "weak_function");
  EXPECT_EQ(symbols[3].name, "ext4_fill_super");
  EXPECT_EQ(symbols[3].module, "ext4");
  EXPECT_EQ(counts.lines, 10u);
  EXPECT_EQ(counts.malformed, 4u);
  EXPECT_EQ(counts.ignored, 2u);
}

TEST(Kallsyms, ParsesThisMachinesKallsyms) {
  std::string text;
  if (FILE* file = fopen("/proc/kallsyms", "r")) {
    char buffer[1 << 16];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
    fclose(file);
  }
  if (text.empty()) GTEST_SKIP() << "/proc/kallsyms is not readable here";
  TextParseCounts counts;
  std::vector<format::KernelSymbol> symbols = parseKallsyms(text, &counts);
  EXPECT_EQ(counts.malformed, 0u);
  // Root sees real addresses; others see zeros, all ignored.
  EXPECT_EQ(symbols.size() + counts.ignored, counts.lines);
}

TEST(Kallsyms, RandomBytesNeverCrash) {
  std::mt19937 random(7);
  for (int round = 0; round < 200; ++round) {
    std::string text(random() % 512, '\0');
    for (char& c : text) c = static_cast<char>(random() % 4 == 0 ? '\n' : random());
    TextParseCounts counts;
    std::vector<format::KernelSymbol> symbols = parseKallsyms(text, &counts);
    EXPECT_EQ(symbols.size() + counts.malformed + counts.ignored, counts.lines);
  }
}

}  // namespace
}  // namespace incise::objfile
