// Numbers on a command line: the one parser behind every numeric option of
// incise-record and incise, always bounded.
//
// A whole number is decimal digits. A real number is digits with an optional
// fraction and exponent ("1.5", ".5", "2e-3"). Signs, blanks, hex, "inf",
// "nan" and anything after the number are refused, and so is a value outside
// [min, max]. Every error names the option, repeats the text and gives the
// bounds: `-F -5` must not become 4294967291, nor `-d 1e300` overflow a
// nanosecond count:
//   "-F '-5': expected a whole number from 1 to 100000 (Hz)"
//   "-d '1e300': expected a number from 0.001 to 31536000 (seconds)"
//
//   Result<uint64_t> hz = parseWholeNumber("-F", text, {.min = 1, .max = 100000, .unit = "Hz"});
//   Result<double> s = parseRealNumber("-d", text, {.min = 1e-3, .max = 31536000, .unit =
//   "seconds"}); Result<uint64_t> ns = parseSecondsAsNs("--time", "1.5", {.max = 1e9});   //
//   1500000000
//
// options/bounded_value.h puts the same parser behind a Boost.Program_options
// value, for options declared that way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace incise::options {

struct WholeBounds {
  uint64_t min = 0;
  uint64_t max = UINT64_MAX;
  std::string_view unit;  // "Hz", "MB"; shown after the bounds
};

struct RealBounds {
  double min = 0;
  double max = 1e15;
  std::string_view unit;
};

// `option` is how errors name it ("-F", "--limit", "-g dwarf=").
Result<uint64_t> parseWholeNumber(std::string_view option, std::string_view text,
                                  const WholeBounds& bounds);
Result<double> parseRealNumber(std::string_view option, std::string_view text,
                               const RealBounds& bounds);
// Seconds as a real number, rounded to ns; bounds in seconds (unit: "seconds").
Result<uint64_t> parseSecondsAsNs(std::string_view option, std::string_view text,
                                  const RealBounds& bounds);

// "12", "0.5", "1e-06": a bound as the messages print it.
std::string numberText(double value);

}  // namespace incise::options
