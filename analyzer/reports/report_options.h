// Forwarding header: the report option parser is now the one command line of
// every subcommand, analyzer/cli/command_line.h. Kept only for
// analyzer/export/export_command.cc until it includes command_line.h itself.
//
//   #include "analyzer/cli/command_line.h"   // instead of this file
//   CommandLine cli("export", summary, examples);
#pragma once

#include "analyzer/cli/command_line.h"

namespace incise::analyzer {

// TODO(cli): remove once export_command.cc names CommandLine.
using ReportCommandLine = CommandLine;

}  // namespace incise::analyzer
