// The trace inspection commands: `incise info`, `incise dump`, `incise check`.
//
// Each has a stream-taking form the tests call and a run* form the command
// list registers (it prints to stdout/stderr). Exit codes follow
// analyzer/cli/command.h: 0 ok, 1 bad or damaged input, 2 bad usage.
//
//   std::ostringstream out, err;
//   int code = incise::analyzer::info({"app.trace", "--json"}, out, err);
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace incise::analyzer {

int info(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int dump(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int check(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

int runInfo(const std::vector<std::string>& args);
int runDump(const std::vector<std::string>& args);
int runCheck(const std::vector<std::string>& args);

}  // namespace incise::analyzer
