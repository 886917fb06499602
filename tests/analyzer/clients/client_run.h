// Runs the scripts of tools/clients (node + puppeteer-core + chromium, and
// speedscope's app) and parses the JSON they print, for the client tests.
//
//   INCISE_REQUIRE_CLIENTS();   // skip without them, but fail when CI=true
//   nlohmann::json page = runClient("check_flame_graph.js", {svg_path, "^main$"});
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace incise::testing {

// Empty when node, the npm packages of tools/clients and chromium are all
// there, else what is missing.
std::string clientsUnavailableReason();
bool clientsRequired();  // CI=true

#define INCISE_REQUIRE_CLIENTS()                                                     \
  do {                                                                               \
    std::string why_not = ::incise::testing::clientsUnavailableReason();             \
    if (!why_not.empty()) {                                                          \
      if (::incise::testing::clientsRequired()) FAIL() << "CI=true but " << why_not; \
      GTEST_SKIP() << why_not;                                                       \
    }                                                                                \
  } while (0)

// `node tools/clients/SCRIPT ARGS...`; its stdout parsed (discarded on error,
// with stderr in `error`).
nlohmann::json runClient(const std::string& script, const std::vector<std::string>& args,
                         std::string* error = nullptr);

// A temporary file path ending in `suffix`, removed by the caller.
std::string tempPath(const std::string& suffix);

}  // namespace incise::testing
