// The one list of `incise` subcommands, in the order `incise --help` shows them.
#include "analyzer/cli/command.h"

namespace incise::analyzer {

int runRecord(const std::vector<std::string>& args);

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"record", "record a trace (runs incise-record; see incise record --help)", runRecord},
  };
  return list;
}

}  // namespace incise::analyzer
