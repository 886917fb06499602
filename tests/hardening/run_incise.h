// Runs the real `incise` binary for a hardening test and returns its exit
// status and output, so tests check what a user would see on a terminal.
//
//   Outcome top = runIncise({"top", path, "--limit", "-1"});
//   EXPECT_EQ(top.exit_code, 2);
//   EXPECT_NE(top.err.find("--limit '-1'"), std::string::npos);
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "tests/hardening/child_process.h"

namespace incise::testing {

struct Outcome {
  int exit_code = -1;  // -1: still running after two minutes (then killed)
  std::string out, err;
};

inline Outcome runIncise(std::vector<std::string> args) {
  args.insert(args.begin(), INCISE_BIN);
  ChildProcess child = ChildProcess::start(args);
  std::optional<int> status = child.waitFor(std::chrono::seconds(120));
  return Outcome{status ? *status : -1, child.output(), child.errors()};
}

}  // namespace incise::testing
