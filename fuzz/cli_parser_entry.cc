// Fuzz entry for the command-line parsers: the one number parser, --time
// windows, archive selectors, incise-record's whole command line and a
// report's (incise top's options). Input: one mode byte, then the text; for
// the two command lines, arguments separated by NUL bytes.
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/archive/archive_selector.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/model/filter.h"
#include "fuzz/fuzz_entries.h"
#include "options/number_option.h"
#include "recorder/options.h"

namespace incise::fuzz {
namespace {

namespace po = boost::program_options;

std::vector<std::string> splitArguments(std::string_view text) {
  std::vector<std::string> args;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string_view::npos) end = text.size();
    args.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return args;
}

void numbers(std::string_view text) {
  // Bounds from the text's length, so they vary with the input.
  const uint64_t max = text.size() % 2 ? UINT64_MAX : uint64_t{1} << (text.size() % 64);
  Result<uint64_t> whole = options::parseWholeNumber("--n", text, {.min = 1, .max = max});
  if (whole && (*whole < 1 || *whole > max)) __builtin_trap();
  if (whole && text.find_first_not_of("0123456789") != std::string_view::npos) __builtin_trap();
  if (!whole && whole.error().message().find("--n '") != 0) __builtin_trap();
  Result<double> real = options::parseRealNumber("--r", text, {.min = 0.5, .max = 1e6});
  if (real && !(*real >= 0.5 && *real <= 1e6)) __builtin_trap();
  Result<uint64_t> ns = options::parseSecondsAsNs("--s", text, {.max = 1e30});
  if (ns && *ns > uint64_t{18'000'000'000} * 1'000'000'000) __builtin_trap();
}

void timeWindow(std::string_view text) {
  auto window = analyzer::Filter::parseTimeRange(std::string(text));
  if (window && window->end_ns < window->start_ns) __builtin_trap();
}

void selector(std::string_view text) {
  auto parsed = analyzer::parseSelector(std::string(text));
  if (!parsed) return;
  for (const auto& [key, value] : parsed->terms) {
    if (key.empty()) __builtin_trap();
  }
  std::vector<analyzer::ArchiveEntry> entries(2);
  entries[0].id = "3f9c0a1b";
  entries[0].tags = {{"release", "1.4"}};
  entries[1].id = "77aa";
  entries[1].start_wall_ns = 1'700'000'000'000'000'000ull;
  (void)analyzer::resolveSelector(entries, *parsed);
}

void recorderCommandLine(std::string_view text) {
  std::vector<std::string> args = splitArguments(text);
  args.insert(args.begin(), "incise-record");
  std::vector<const char*> argv;
  for (const auto& arg : args) argv.push_back(arg.c_str());
  auto parsed = recorder::parseCommandLine(static_cast<int>(argv.size()), argv.data());
  if (!parsed || parsed->help) return;
  const recorder::RecordConfig& c = parsed->config;
  if (c.frequency_hz == 0 || c.frequency_hz > 100000) __builtin_trap();
  if (c.duration_seconds < 0 || c.duration_seconds > 365.0 * 86400) __builtin_trap();
  if (c.max_size_bytes > (uint64_t{1} << 40)) __builtin_trap();
  if (c.user_stack_bytes > 65536 || c.user_stack_bytes % 8 != 0) __builtin_trap();
  if (c.output.empty()) __builtin_trap();
}

void reportCommandLine(std::string_view text) {
  std::ostringstream out, err;
  analyzer::CommandLine cli({.name = "top", .summary = "fuzzed", .examples = ""},
                            analyzer::SharedOptions{}, out, err);
  cli.extra().add_options()("limit", po::value<size_t>()->default_value(40), "rows")(
      "by", po::value<std::string>()->default_value("function"), "grouping");
  std::optional<int> exit = cli.parse(splitArguments(text));
  if (exit && *exit != 0 && *exit != 2) __builtin_trap();
  if (exit && *exit == 2 && err.str().find("incise top: ") != 0) __builtin_trap();
  if (!exit && cli.options().trace.threads > 256) __builtin_trap();
}

}  // namespace

int fuzzCliParsers(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      numbers(text);
      break;
    case 1:
      timeWindow(text);
      break;
    case 2:
      selector(text);
      break;
    case 3:
      recorderCommandLine(text);
      break;
    case 4:
      reportCommandLine(text);
      break;
  }
  return 0;
}

}  // namespace incise::fuzz
