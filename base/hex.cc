#include "base/hex.h"

#include <charconv>
#include <cstdio>

namespace incise {
namespace {

int digitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string hexBytes(std::string_view raw) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(raw.size() * 2);
  for (unsigned char byte : raw) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 0xf]);
  }
  return hex;
}

Result<std::string> bytesFromHex(std::string_view hex) {
  if (hex.size() % 2 != 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "odd number of hex digits in '" + std::string(hex) + "'");
  }
  std::string raw;
  raw.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int high = digitValue(hex[i]);
    int low = digitValue(hex[i + 1]);
    if (high < 0 || low < 0) {
      return Error(ErrorCode::kInvalidArgument, "not a hex digit in '" + std::string(hex) + "'");
    }
    raw.push_back(static_cast<char>(high << 4 | low));
  }
  return raw;
}

std::optional<uint64_t> parseHex(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    text.remove_prefix(2);
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string hexWord(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string hexAddress(uint64_t address) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(address));
  return buffer;
}

}  // namespace incise
