#include "analyzer/render/terminal_text.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace incise::analyzer {
namespace {

// No byte a terminal acts on: no C0 control, no DEL, nothing outside ASCII
// but well-formed UTF-8 (checked by the round trip through isTerminalSafe).
bool inert(const std::string& text) {
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) return false;
  }
  return isTerminalSafe(text);
}

TEST(TerminalText, PlainTextAndUtf8AreKept) {
  EXPECT_EQ(terminalText("std::vector<int>::push_back"), "std::vector<int>::push_back");
  EXPECT_EQ(terminalText("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x94\xa5"),
            "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x94\xa5");
  EXPECT_EQ(terminalText(""), "");
  EXPECT_EQ(terminalText("a\\x1b"), "a\\x1b");  // a backslash stays as it is
}

TEST(TerminalText, AnOscTitleSequenceIsDefused) {
  EXPECT_EQ(terminalText("\x1b]0;PWNED\x07"), "\\x1b]0;PWNED\\x07");
  EXPECT_EQ(terminalText("\x1b[2J\x1b[H"), "\\x1b[2J\\x1b[H");
}

TEST(TerminalText, EveryControlByteIsEscaped) {
  for (int byte = 0; byte < 0x20; ++byte) {
    std::string in(1, static_cast<char>(byte));
    char expected[8];
    std::snprintf(expected, sizeof expected, "\\x%02x", byte);
    EXPECT_EQ(terminalText(in), expected) << byte;
  }
  EXPECT_EQ(terminalText("\x7f"), "\\x7f");
  EXPECT_EQ(terminalText(std::string("a\0b", 3)), "a\\x00b");
}

TEST(TerminalText, BytesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(terminalText("\xff"), "\\xff");
  EXPECT_EQ(terminalText("\xc3"), "\\xc3");                             // cut short
  EXPECT_EQ(terminalText("\xc0\x80"), "\\xc0\\x80");                    // overlong NUL
  EXPECT_EQ(terminalText("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(terminalText("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(terminalText("ok\xe2\x82"), "ok\\xe2\\x82");
}

TEST(TerminalText, C1ControlsAndBidiOverridesAreEscaped) {
  EXPECT_EQ(terminalText("\xc2\x9b"
                         "31m"),
            "\\u{009b}31m");  // CSI as a C1 control
  EXPECT_EQ(terminalText("abc\xe2\x80\xae"
                         "fed"),
            "abc\\u{202e}fed");                            // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(terminalText("\xe2\x81\xa6x"), "\\u{2066}x");  // LEFT-TO-RIGHT ISOLATE
  EXPECT_EQ(terminalText("\xc2\xa0"), "\xc2\xa0");         // NO-BREAK SPACE is text
}

TEST(TerminalText, AppendsAndChecks) {
  std::string line = "comm=";
  appendTerminalText(line, "x\ty");
  EXPECT_EQ(line, "comm=x\\x09y");
  EXPECT_TRUE(isTerminalSafe("main"));
  EXPECT_TRUE(isTerminalSafe("\xc3\xa9"));
  EXPECT_FALSE(isTerminalSafe("a\nb"));
  EXPECT_FALSE(isTerminalSafe("\xc2\x85"));
}

TEST(TerminalText, RandomBytesComeOutInertAndEscapingTwiceChangesNothing) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255), length(0, 40);
  for (int round = 0; round < 20000; ++round) {
    std::string in(static_cast<size_t>(length(rng)), '\0');
    for (char& c : in) c = static_cast<char>(byte(rng));
    std::string once = terminalText(in);
    ASSERT_TRUE(inert(once)) << once;
    ASSERT_EQ(terminalText(once), once);
    ASSERT_EQ(isTerminalSafe(in), once == in);
  }
}

}  // namespace
}  // namespace incise::analyzer
