// The `incise-record` command line: parsing, validation and the --help text.
//
//   Result<ParsedCommandLine> parsed = parseCommandLine(argc, argv);
//   if (!parsed) { std::cerr << "incise-record: " << parsed.error().message() << "\n"; return 2; }
//   if (parsed->help) { std::cout << helpText(); return 0; }
//   run(parsed->config);
//
// Every problem is named: "-F 0: the frequency must be 1..100000 Hz",
// "no such process: 1234", "choose one target: -p, -a, --cgroup or -- CMD".
#pragma once

#include <string>

#include "base/status.h"
#include "recorder/record_config.h"

namespace incise::recorder {

struct ParsedCommandLine {
  RecordConfig config;
  bool help = false;
};

Result<ParsedCommandLine> parseCommandLine(int argc, const char* const* argv);
std::string helpText();

}  // namespace incise::recorder
