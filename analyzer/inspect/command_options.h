// Shared command-line plumbing for the inspect commands: Boost.Program_options
// parsing with one positional FILE, --help that prints usage, options and
// examples, and usage errors turned into exit code 2.
//
//   CommandHelp help{"incise info FILE [--json]", "What is in a trace.", "  incise info
//   a.trace\n"}; po::options_description options("options"); options.add_options()("json", "print
//   JSON"); auto parsed = parseCommand(args, options, help, out, err); if (!parsed.proceed) return
//   parsed.exit_code;
#pragma once

#include <boost/program_options.hpp>
#include <iosfwd>
#include <string>
#include <vector>

namespace incise::analyzer {

namespace po = boost::program_options;

struct CommandHelp {
  std::string usage;     // "incise info FILE [--json]"
  std::string summary;   // what the command is for, a few lines
  std::string examples;  // indented example lines
};

struct ParsedCommand {
  bool proceed = false;  // false: help was printed or usage was wrong
  int exit_code = 0;
  std::string file;
  po::variables_map values;
};

// Adds --help and the positional FILE to `options` and parses `args`.
ParsedCommand parseCommand(const std::vector<std::string>& args, po::options_description& options,
                           const CommandHelp& help, std::ostream& out, std::ostream& err);

}  // namespace incise::analyzer
