// Runs a report command the way the CLI does and returns what it wrote, so
// report tests check the real output (options, filters, header, rendering).
//
//   nlohmann::json doc = runReportJson(runTop, {path, "--tid", "101"});
//   std::string folded = runReportText(runFlame, {path});   // -o is added
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace incise::analyzer::testing {

using ReportMain = int (*)(const std::vector<std::string>&);

struct ReportResult {
  int exit_code = -1;
  std::string output;
};

// Adds "-o TMPFILE" (with `extension`, which picks the flame format) and reads it back.
inline ReportResult runReport(ReportMain report, std::vector<std::string> args,
                              const std::string& extension = ".out") {
  std::string pattern = "/tmp/incise-report-XXXXXX" + extension;
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = mkstemps(name.data(), static_cast<int>(extension.size()));
  if (fd < 0) return {};
  close(fd);
  std::string path(name.data());
  args.push_back("-o");
  args.push_back(path);
  ReportResult result;
  result.exit_code = report(args);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  result.output = text.str();
  unlink(path.c_str());
  return result;
}

inline nlohmann::json runReportJson(ReportMain report, std::vector<std::string> args) {
  args.push_back("--json");
  ReportResult result = runReport(report, std::move(args));
  if (result.exit_code != 0) return {{"exit_code", result.exit_code}};
  return nlohmann::json::parse(result.output);
}

}  // namespace incise::analyzer::testing
