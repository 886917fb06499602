// Program_options parsing shared by info, dump and check.
#include "analyzer/inspect/command_options.h"

#include <ostream>

namespace incise::analyzer {
namespace {

void printHelp(std::ostream& out, const po::options_description& options, const CommandHelp& help) {
  out << "usage: " << help.usage << "\n\n"
      << help.summary << "\n\n"
      << options << "\nexamples:\n"
      << help.examples;
}

}  // namespace

ParsedCommand parseCommand(const std::vector<std::string>& args, po::options_description& options,
                           const CommandHelp& help, std::ostream& out, std::ostream& err) {
  options.add_options()("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("file", po::value<std::string>(), "trace file");
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("file", 1);

  ParsedCommand parsed;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(),
              parsed.values);
    po::notify(parsed.values);
  } catch (const po::error& e) {
    err << "error: " << e.what() << "\n\nusage: " << help.usage
        << "\n(--help explains the options)\n";
    parsed.exit_code = 2;
    return parsed;
  }
  if (parsed.values.count("help")) {
    printHelp(out, options, help);
    return parsed;
  }
  if (!parsed.values.count("file")) {
    err << "error: no trace file given\n\nusage: " << help.usage
        << "\n(--help explains the options)\n";
    parsed.exit_code = 2;
    return parsed;
  }
  parsed.file = parsed.values["file"].as<std::string>();
  parsed.proceed = true;
  return parsed;
}

}  // namespace incise::analyzer
