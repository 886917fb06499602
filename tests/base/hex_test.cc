#include "base/hex.h"

#include <gtest/gtest.h>

#include <string>

namespace incise {
namespace {

TEST(Hex, BytesRoundTrip) {
  const std::string raw("\x1f\xa0\x00\xff", 4);
  EXPECT_EQ(hexBytes(raw), "1fa000ff");
  Result<std::string> back = bytesFromHex("1fa000FF");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, raw);
  EXPECT_EQ(hexBytes(""), "");
}

TEST(Hex, BadDigitsAreInvalidArguments) {
  EXPECT_EQ(bytesFromHex("abc").error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bytesFromHex("zz").error().code(), ErrorCode::kInvalidArgument);
}

TEST(Hex, NumbersWholeTextOnlyNoOverflow) {
  EXPECT_EQ(parseHex("7f3a2c000000"), 0x7f3a2c000000u);
  EXPECT_EQ(parseHex("0xFFFFffffffffffff"), 0xffffffffffffffffu);
  EXPECT_EQ(parseHex("10000000000000000"), std::nullopt);  // 17 digits: overflow
  EXPECT_EQ(parseHex(""), std::nullopt);
  EXPECT_EQ(parseHex("0x"), std::nullopt);
  EXPECT_EQ(parseHex("12 "), std::nullopt);
  EXPECT_EQ(parseHex("-1"), std::nullopt);
}

}  // namespace
}  // namespace incise
