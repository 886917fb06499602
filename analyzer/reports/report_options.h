// ReportCommandLine: the options every report shares, parsed once.
//
// Common options: FILE (positional), --pid/--tid/--cpu (repeatable or
// comma-separated), --comm, --time START..END (seconds from the trace start),
// --json, -o FILE, --symfs DIR, --debug-dir DIR, --threads N. A report adds
// its own options to extra() before parse(). --help prints usage, the
// options and the report's EXAMPLES block.
//
//   ReportCommandLine cli("top", "flat profile: self and total % per function",
//                         "  incise top app.trace --by module\n");
//   cli.extra().add_options()("limit", po::value<size_t>()->default_value(40), "rows");
//   if (std::optional<int> exit = cli.parse(args)) return *exit;
//   std::unique_ptr<Trace> trace = cli.openTrace();
//   if (!trace) return 1;   // the error was printed
#pragma once

#include <boost/program_options.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/model/trace.h"
#include "analyzer/model/trace_options.h"

namespace incise::analyzer {

struct ReportOptions {
  std::string file;
  TraceOptions trace;
  bool json = false;
  std::string output;  // -o; empty: stdout
};

class ReportCommandLine {
 public:
  ReportCommandLine(std::string name, std::string summary, std::string examples);

  boost::program_options::options_description& extra() { return extra_; }
  // nullopt: go on; otherwise the exit code (0 after --help, 2 on bad usage,
  // with the message printed to stderr).
  std::optional<int> parse(const std::vector<std::string>& args);

  const ReportOptions& options() const { return options_; }
  const boost::program_options::variables_map& values() const { return values_; }
  const std::string& name() const { return name_; }

  // Opens options().file; prints "incise NAME: <error>" and returns null on failure.
  std::unique_ptr<Trace> openTrace() const;
  // Prints "incise NAME: message" to stderr and returns 2 (usage) — for
  // report-specific option checks.
  int usageError(const std::string& message) const;

 private:
  void printHelp(std::ostream& out) const;

  std::string name_;
  std::string summary_;
  std::string examples_;
  boost::program_options::options_description common_;
  boost::program_options::options_description extra_;
  boost::program_options::variables_map values_;
  ReportOptions options_;
};

// "1,2" and repeated flags -> {1, 2}; an error naming the bad item otherwise.
Result<std::set<uint32_t>> parseIdList(const std::vector<std::string>& items,
                                       const std::string& option);

}  // namespace incise::analyzer
