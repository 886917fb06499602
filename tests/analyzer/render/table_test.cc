#include "analyzer/render/table.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

namespace incise::analyzer {
namespace {

TEST(TableTest, AlignsColumnsToTheWidestCell) {
  Table table({{"SELF%", Align::kRight}, {"SAMPLES", Align::kRight}, {"FUNCTION"}});
  table.addRow({"100.00", "7", "main"});
  table.addRow({"5.00", "12345", "parse"});
  std::ostringstream out;
  table.render(out);
  EXPECT_EQ(out.str(),
            " SELF%  SAMPLES  FUNCTION\n"
            "100.00        7  main\n"
            "  5.00    12345  parse\n");
}

TEST(TableTest, LeftColumnsArePaddedButNoTrailingBlanks) {
  Table table({{"COMM"}, {"TID", Align::kRight}, {"NOTE"}});
  table.addRow({"a", "1", ""});
  table.addRow({"worker", "22", "x"});
  std::ostringstream out;
  table.render(out);
  EXPECT_EQ(out.str(),
            "COMM    TID  NOTE\n"
            "a         1\n"
            "worker   22  x\n");
}

TEST(TableTest, TruncatesToMaxWidthAndCountsCodePoints) {
  Table table({{"NAME", Align::kLeft, 6}, {"N", Align::kRight}});
  table.addRow({"abcdefghij", "1"});
  table.addRow({"\xc3\xa9t\xc3\xa9", "2"});  // "été": 3 code points, 5 bytes
  std::ostringstream out;
  table.render(out);
  EXPECT_EQ(out.str(),
            "NAME    N\n"
            "abcd..  1\n"
            "\xc3\xa9t\xc3\xa9     2\n");
  EXPECT_EQ(displayWidth("\xc3\xa9t\xc3\xa9"), 3u);
  EXPECT_EQ(truncate("abc", 2), "..");
  EXPECT_EQ(truncate("abc", 3), "abc");
}

TEST(TableTest, MissingCellsAreEmpty) {
  Table table({{"A"}, {"B"}});
  table.addRow({"x"});
  std::ostringstream out;
  table.render(out);
  EXPECT_EQ(out.str(), "A  B\nx\n");
}

TEST(FormatTest, PercentMatchesPrintfIncludingHalfwayTies) {
  // Percentages as reports compute them (part / whole), where ties like
  // x.xx5 are common, plus values too long for the fast path.
  for (uint64_t whole : {7u, 8u, 40u, 400u, 60405u}) {
    for (uint64_t part = 0; part <= whole; part += 1 + whole / 997) {
      double percent = percentOf(part, whole);
      char expected[64];
      std::snprintf(expected, sizeof expected, "%.2f", percent);
      EXPECT_EQ(formatPercent(percent), expected) << part << " / " << whole;
    }
  }
  char expected[64];
  std::snprintf(expected, sizeof expected, "%.2f", 1e40);
  EXPECT_EQ(formatPercent(1e40), std::string(expected).substr(0, 31));
}

TEST(FormatTest, NumbersAndDurations) {
  EXPECT_EQ(formatPercent(12.345), "12.35");
  EXPECT_EQ(formatPercent(0), "0.00");
  EXPECT_EQ(formatDurationNs(950), "950 ns");
  EXPECT_EQ(formatDurationNs(1250), "1.250 us");
  EXPECT_EQ(formatDurationNs(12'500'000), "12.500 ms");
  EXPECT_EQ(formatDurationNs(3'000'000'000), "3.000 s");
  EXPECT_DOUBLE_EQ(percentOf(1, 4), 25.0);
  EXPECT_DOUBLE_EQ(percentOf(1, 0), 0.0);
}

}  // namespace
}  // namespace incise::analyzer
