// Hexadecimal text for bytes and numbers, one spelling everywhere: build ids
// ("a1b2c3..."), addresses in /proc/PID/maps ("7f3a2c000000").
//
//   hexBytes(std::string("\x1f\xa0", 2)) == "1fa0"
//   bytesFromHex("1fa0")                  -> "\x1f\xa0" (an Error on odd length or a non-digit)
//   parseHex("7f3a2c000000")              -> 0x7f3a2c000000 (also "0x7f3a2c000000")
//   hexAddress(0x7f3a2c000000)            == "0x7f3a2c000000"
//   hexWord(0xf067aa0ba902b7)             == "00f067aa0ba902b7"
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace incise {

// Lower-case, two digits a byte.
std::string hexBytes(std::string_view raw);
Result<std::string> bytesFromHex(std::string_view hex);
// The whole text as a hex number, with an optional 0x prefix; nullopt on
// anything else (empty, stray characters, overflow).
std::optional<uint64_t> parseHex(std::string_view text);
// "0x" and lower-case digits, no leading zeros.
std::string hexAddress(uint64_t address);
// 16 lower-case digits, zero-padded: a 64-bit id ("00f067aa0ba902b7").
std::string hexWord(uint64_t value);

}  // namespace incise
