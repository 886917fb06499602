#include "options/number_option.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace incise::options {
namespace {

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// Digits, then an optional fraction and exponent: what parseRealNumber takes.
bool isDecimalReal(std::string_view text) {
  size_t i = 0, digits = 0;
  while (i < text.size() && isDigit(text[i])) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && isDigit(text[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    size_t exponent_digits = 0;
    while (i < text.size() && isDigit(text[i])) ++i, ++exponent_digits;
    if (exponent_digits == 0) return false;
  }
  return i == text.size();
}

std::string unitSuffix(std::string_view unit) {
  return unit.empty() ? "" : " (" + std::string(unit) + ")";
}

// Long or odd input is cut in messages: a message repeats what was typed, not a page of it.
std::string shown(std::string_view text) {
  constexpr size_t kShown = 40;
  return "'" + std::string(text.substr(0, kShown)) + (text.size() > kShown ? "...'" : "'");
}

}  // namespace

std::string numberText(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.15g", value);
  return buffer;
}

Result<uint64_t> parseWholeNumber(std::string_view option, std::string_view text,
                                  const WholeBounds& bounds) {
  uint64_t value = 0;
  bool digits_only = !text.empty();
  for (char c : text) digits_only = digits_only && isDigit(c);
  auto [end, error] = digits_only
                          ? std::from_chars(text.data(), text.data() + text.size(), value)
                          : std::from_chars_result{text.data(), std::errc::invalid_argument};
  if (error != std::errc() || end != text.data() + text.size() || value < bounds.min ||
      value > bounds.max) {
    return Error(std::string(option) + " " + shown(text) + ": expected a whole number from " +
                 std::to_string(bounds.min) + " to " + std::to_string(bounds.max) +
                 unitSuffix(bounds.unit));
  }
  return value;
}

Result<double> parseRealNumber(std::string_view option, std::string_view text,
                               const RealBounds& bounds) {
  double value = 0;
  bool parsed = false;
  if (isDecimalReal(text)) {
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    // A result_out_of_range (1e999, 1e-999) fails like any other bad number.
    parsed = error == std::errc() && end == text.data() + text.size() && std::isfinite(value);
  }
  if (!parsed || !(value >= bounds.min && value <= bounds.max)) {
    return Error(std::string(option) + " " + shown(text) + ": expected a number from " +
                 numberText(bounds.min) + " to " + numberText(bounds.max) +
                 unitSuffix(bounds.unit));
  }
  return value;
}

Result<uint64_t> parseSecondsAsNs(std::string_view option, std::string_view text,
                                  const RealBounds& bounds) {
  RealBounds seconds = bounds;
  if (seconds.unit.empty()) seconds.unit = "seconds";
  // Beyond this a double of ns no longer fits a uint64_t.
  seconds.max = std::min(seconds.max, 1.8e10);
  INCISE_ASSIGN_OR_RETURN(double value, parseRealNumber(option, text, seconds));
  return static_cast<uint64_t>(std::round(value * 1e9));
}

}  // namespace incise::options
