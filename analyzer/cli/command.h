// The `incise` command line is a list of subcommands (`incise top`, `incise
// info`, ...). Each lives in its own file and is registered in exactly one
// place, cli/command_list.cc.
//
//   int runTop(const std::vector<std::string>& args);   // args after "top"
//
// A command returns the process exit code: 0 success, 1 a problem with the
// input (bad file, damaged trace), 2 bad usage. It prints its own --help.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace incise::analyzer {

struct Command {
  std::string_view name;
  std::string_view summary;  // one line for `incise --help`
  int (*run)(const std::vector<std::string>& args);
};

const std::vector<Command>& commands();

}  // namespace incise::analyzer
