// The command-line frame of `incise locks` and `incise correlate`: common
// options (FILE, --pid, --tid, --comm, --time, --cpu, --json, -o, --symfs,
// --debug-dir), --help with examples, opening the trace, the output stream
// and the common header.
//
// Glue over the shared plumbing (analyzer/cli/command_line.h, report_header.h,
// report_output.h), so both reports read as "options, then the report".
//
//   ReportCommand command("locks", "what it does", "  incise locks app.trace\n");
//   command.options().add_options()("limit", po::value(&limit), "rows");
//   return command.run(args, [&](Trace& trace, const ReportOutput& out) { ...; return 0; });
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "analyzer/cli/command_line.h"

namespace incise::analyzer {

class Trace;

class ReportOutput {
 public:
  ReportOutput(const CommandLine& cli, Trace& trace, std::ostream& out)
      : json(cli.options().json), cli_(cli), trace_(trace), out_(out) {}
  const bool json;
  std::ostream& out() const { return out_; }
  void printHeader() const;
  nlohmann::json headerJson() const;
  // A problem with the options found once the trace is open (a --by
  // context the trace lacks): "incise NAME: message" on stderr; returns 2.
  int usageError(const std::string& message) const { return cli_.usageError(message); }

 private:
  const CommandLine& cli_;
  Trace& trace_;
  std::ostream& out_;
};

class ReportCommand {
 public:
  ReportCommand(std::string name, std::string summary, std::string examples,
                SharedOptions shared = {});
  boost::program_options::options_description& options() { return cli_.extra(); }
  // Parses `args`, runs `check` (a usage problem, or "" when the options are
  // fine), opens the trace and runs `report`. Exit codes as in
  // analyzer/cli/command.h: 0 done, 1 bad input, 2 bad usage.
  int run(const std::vector<std::string>& args,
          const std::function<int(Trace&, const ReportOutput&)>& report,
          const std::function<std::string()>& check = {});

 private:
  CommandLine cli_;
};

}  // namespace incise::analyzer
