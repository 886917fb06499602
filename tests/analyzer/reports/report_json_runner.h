// Runs a report command with --json -o FILE and parses what it wrote, for
// report tests that check exact numbers.
//
//   nlohmann::json doc;
//   ASSERT_EQ(runReportJson(runLocks, {path, "--by", "site"}, doc), 0);
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace incise::analyzer::testing {

inline int runReportJson(int (*run)(const std::vector<std::string>&), std::vector<std::string> args,
                         nlohmann::json& doc) {
  char path[] = "/tmp/incise-report-XXXXXX.json";
  int fd = mkstemps(path, 5);
  if (fd < 0) return -1;
  close(fd);
  args.insert(args.end(), {"--json", "-o", path});
  int exit = run(args);
  std::ifstream in(path);
  doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  unlink(path);
  return exit;
}

}  // namespace incise::analyzer::testing
