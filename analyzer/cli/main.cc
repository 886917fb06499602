// incise: the offline analyzer. Dispatches to a subcommand.
#include <iostream>
#include <string>
#include <vector>

#include "analyzer/cli/command.h"
#include "analyzer/cli/exit_without_teardown.h"
#include "analyzer/cli/heap_setup.h"

namespace {

void printUsage(std::ostream& out) {
  out << "usage: incise COMMAND [OPTIONS] [FILE]\n\n"
         "Record on the production box, analyze anywhere: every report reads one trace file.\n\n"
         "commands:\n";
  for (const auto& c : incise::analyzer::commands()) {
    out << "  " << c.name << std::string(c.name.size() < 12 ? 12 - c.name.size() : 1, ' ')
        << c.summary << "\n";
  }
  out << "\n'incise COMMAND --help' explains each command.\n\n"
         "examples:\n"
         "  incise record -o app.trace -F 999 -- ./server     # record a command\n"
         "  incise info app.trace                             # what is in the file\n"
         "  incise top app.trace                              # flat profile\n"
         "  incise flame app.trace -o app.html                # flame graph\n"
         "  incise correlate app.trace                        # lock holders preempted or "
         "faulting\n";
}

}  // namespace

int main(int argc, char** argv) {
  incise::analyzer::setUpReportHeap();
  incise::analyzer::allowExitWithoutTeardown();
  if (argc < 2) {
    printUsage(std::cerr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    printUsage(std::cout);
    return 0;
  }
  if (name == "--version") {
    std::cout << "incise 0.1.0\n";
    return 0;
  }
  for (const auto& c : incise::analyzer::commands()) {
    if (c.name == name) return c.run(std::vector<std::string>(argv + 2, argv + argc));
  }
  std::cerr << "incise: unknown command '" << name << "'\n\n";
  printUsage(std::cerr);
  return 2;
}
