// TabSeparated fields and SQL literals: what goes out parses back, whatever
// characters frame names carry.
#include "analyzer/fleet/tab_separated.h"

#include <gtest/gtest.h>

namespace incise::analyzer {
namespace {

TEST(TabSeparated, EscapedFieldsParseBack) {
  const std::string awkward = "a\tb\\c\nd";
  TabSeparatedRow row;
  row.add(awkward).add(uint64_t{42}).add("");
  auto rows = parseTabSeparated(row.line() + row.line());
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(rows[0].size(), 3u);
  EXPECT_EQ(rows[0][0], awkward);
  EXPECT_EQ(rows[0][1], "42");
  EXPECT_EQ(rows[0][2], "");
}

TEST(TabSeparated, ArraysAreQuotedLiterals) {
  TabSeparatedRow row;
  row.addArray(std::vector<std::string>{"it's", "x\\y"}).addArray(std::vector<uint64_t>{1, 2});
  // The literal ['it\'s','x\\y'] is itself escaped as a field.
  EXPECT_EQ(row.line(), "['it\\\\'s','x\\\\\\\\y']\t[1,2]\n");
}

TEST(TabSeparated, SqlStringEscapesQuotesAndBackslashes) {
  EXPECT_EQ(sqlString("plain"), "'plain'");
  EXPECT_EQ(sqlString("o'k\\"), "'o\\'k\\\\'");
}

}  // namespace
}  // namespace incise::analyzer
