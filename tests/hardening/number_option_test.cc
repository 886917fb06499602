// The one number parser of both command lines: what it takes, what it
// refuses, and that every refusal names the option and the bounds.
#include "options/number_option.h"

#include <gtest/gtest.h>

#include <boost/program_options.hpp>

#include "options/bounded_value.h"

namespace incise::options {
namespace {

TEST(NumberOption, WholeNumbersInBoundsAreTaken) {
  EXPECT_EQ(*parseWholeNumber("-F", "99", {.min = 1, .max = 100000}), 99u);
  EXPECT_EQ(*parseWholeNumber("-F", "00042", {.max = 100}), 42u);
  EXPECT_EQ(*parseWholeNumber("--limit", "18446744073709551615", {}), UINT64_MAX);
  EXPECT_EQ(*parseWholeNumber("-x", "0", {}), 0u);
}

TEST(NumberOption, EverythingElseIsRefusedWithTheBounds) {
  for (const char* text : {"-5", "+5", " 5", "5 ", "5x", "0x10", "1e3", "1.0", "", "inf", "nan",
                           "18446744073709551616", "99999999999999999999999"}) {
    Result<uint64_t> value = parseWholeNumber("-F", text, {.min = 1, .max = 100000, .unit = "Hz"});
    ASSERT_FALSE(value) << text;
    EXPECT_EQ(value.error().message(),
              std::string("-F '") + text + "': expected a whole number from 1 to 100000 (Hz)");
  }
  EXPECT_FALSE(parseWholeNumber("-F", "0", {.min = 1, .max = 100000}));
  EXPECT_FALSE(parseWholeNumber("-F", "100001", {.min = 1, .max = 100000}));
}

TEST(NumberOption, RealNumbers) {
  RealBounds seconds{.min = 1e-3, .max = 31536000, .unit = "seconds"};
  EXPECT_DOUBLE_EQ(*parseRealNumber("-d", "1.5", seconds), 1.5);
  EXPECT_DOUBLE_EQ(*parseRealNumber("-d", ".5", seconds), 0.5);
  EXPECT_DOUBLE_EQ(*parseRealNumber("-d", "2e3", seconds), 2000);
  EXPECT_DOUBLE_EQ(*parseRealNumber("-d", "5.", seconds), 5);
  for (const char* text : {"inf", "-inf", "nan", "1e300", "1e999", "-1", "0", "1e-999", "0x1p3",
                           "1,5", "1.5s", "", ".", "e5", "1e", "1e+", " 1"}) {
    Result<double> value = parseRealNumber("-d", text, seconds);
    ASSERT_FALSE(value) << text;
    EXPECT_EQ(value.error().message(),
              std::string("-d '") + text + "': expected a number from 0.001 to 31536000 (seconds)");
  }
}

TEST(NumberOption, SecondsBecomeNanosecondsWithoutOverflow) {
  EXPECT_EQ(*parseSecondsAsNs("--time", "1.5", {.max = 1e9}), 1'500'000'000u);
  EXPECT_EQ(*parseSecondsAsNs("--time", "0", {.max = 1e9}), 0u);
  // Whatever the bound asked for, a result past uint64_t nanoseconds is refused.
  EXPECT_FALSE(parseSecondsAsNs("--time", "1e11", {.max = 1e15}));
  EXPECT_TRUE(parseSecondsAsNs("--time", "1.7e10", {.max = 1e15}));
}

TEST(NumberOption, LongTextIsCutInMessages) {
  std::string text(1000, '7');
  Result<uint64_t> value = parseWholeNumber("--limit", text, {.max = 10});
  ASSERT_FALSE(value);
  EXPECT_LT(value.error().message().size(), 120u);
}

// The Boost adapter: what a command line sees.
TEST(BoundedValue, BoostOptionsUseTheParserAndNameTheOption) {
  namespace po = boost::program_options;
  po::options_description options;
  options.add_options()("threads", boundedValue<unsigned>({.max = 256})->default_value(0), "n")(
      "duration,d", boundedValue<double>({.min = 1e-3, .max = 10, .unit = "seconds"}), "s");
  auto parse = [&](std::vector<std::string> args) -> std::string {
    po::variables_map values;
    try {
      po::store(po::command_line_parser(args).options(options).run(), values);
      po::notify(values);
    } catch (const po::error& e) {
      return e.what();
    }
    return "ok " + std::to_string(values["threads"].as<unsigned>());
  };
  EXPECT_EQ(parse({"--threads", "8"}), "ok 8");
  EXPECT_EQ(parse({}), "ok 0");
  EXPECT_EQ(parse({"--threads", "100000"}),
            "--threads '100000': expected a whole number from 0 to 256");
  EXPECT_EQ(parse({"--threads=4294967297"}),
            "--threads '4294967297': expected a whole number from 0 to 256");
  // Boost names an option by its long name, whichever way it was typed.
  EXPECT_EQ(parse({"-d", "inf"}), "--duration 'inf': expected a number from 0.001 to 10 (seconds)");
  EXPECT_EQ(parse({"--duration", "1e300"}),
            "--duration '1e300': expected a number from 0.001 to 10 (seconds)");
  // A whole-number option's bounds never exceed its type.
  po::options_description small;
  small.add_options()("n", boundedValue<uint16_t>({.max = 1'000'000}), "n");
  po::variables_map values;
  EXPECT_THROW(
      po::store(
          po::command_line_parser(std::vector<std::string>{"--n", "70000"}).options(small).run(),
          values),
      po::error);
}

}  // namespace
}  // namespace incise::options
