// Runs a report command with --json -o FILE and parses what it wrote, for
// report tests that check exact numbers; and finds a lock or wait report's
// groups at an address, as the JSON spells it.
//
//   nlohmann::json doc;
//   ASSERT_EQ(runReportJson(runLocks, {path, "--by", "site"}, doc), 0);
//   std::vector<nlohmann::json> mine = groupsAt(doc["groups"], pid, hexAddress(0xc0000a6000));
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
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

// "0xc0000a6000": an address as the reports' JSON gives it.
inline std::string hexAddress(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

// The groups of process `pid` at `address`.
inline std::vector<nlohmann::json> groupsAt(const nlohmann::json& groups, uint64_t pid,
                                            const std::string& address) {
  std::vector<nlohmann::json> found;
  for (const auto& g : groups)
    if (g["pid"] == pid && g["address"] == address) found.push_back(g);
  return found;
}

}  // namespace incise::analyzer::testing
