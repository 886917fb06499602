// CommandLine: the one option parser of every `incise` subcommand that reads
// traces (info, dump, check, top, flame, offcpu, sched, locks, correlate,
// diff, export, archive diff).
//
// It knows the positional trace file(s), --help (usage, summary, the
// command's own options, the shared ones, EXAMPLES), and the shared options,
// each spelled and parsed in one place:
//   filters  --pid --tid --cpu (repeat or comma list), --comm, --time START..END,
//            --where NAME=VALUE[,VALUE...] / NAME!=VALUE (repeat: all must hold)
//   output   --json, -o FILE
//   reading  --symfs DIR, --debug-dir DIR, --threads N, --signatures
// A command picks which shared options it takes (SharedOptions) and adds its
// own to extra(). Usage errors print "incise NAME: problem" and exit 2;
// --help prints to `out` and exits 0. Messages are escaped for the terminal
// (analyzer/render/terminal_text.h): they may quote a path or a name.
//
//   CommandLine cli("top", "Flat profile of CPU samples.", "  incise top app.trace\n");
//   cli.extra().add_options()("limit", po::value<size_t>()->default_value(40), "rows");
//   if (std::optional<int> exit = cli.parse(args)) return *exit;
//   std::unique_ptr<Trace> trace = cli.openTrace();    // filters, symbols, names applied
//   if (!trace) return 1;                              // the error was printed
//
// Commands with another shape (`incise diff BASE NEW`, no filters) say so:
//
//   CommandLine cli({.name = "diff", .operands = {"BASE", "NEW"}, .summary = ..., .examples = ...},
//                   {.pid_tid = false});
#pragma once

#include <boost/program_options.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analyzer/model/trace.h"
#include "analyzer/model/trace_options.h"
#include "base/status.h"

namespace incise::analyzer {

// Which shared options a command takes. The default is a report's: all.
struct SharedOptions {
  bool pid_tid = true;    // --pid, --tid
  bool cpu = true;        // --cpu
  bool comm_time = true;  // --comm, --time
  bool where = true;      // --where (the command's Trace comes from openTrace)
  bool json = true;       // --json
  bool output = true;     // -o FILE
  bool reading = true;    // --symfs, --debug-dir, --threads, --signatures
  std::string json_help = "print JSON instead of a table";
  std::string output_help = "write to this file instead of stdout";
};

// Commands that read a file as stored (info, dump, check): no filters, no
// symbols, no -o; --json when `json`.
inline SharedOptions storedFileOptions(bool json) {
  return {.pid_tid = false,
          .cpu = false,
          .comm_time = false,
          .where = false,
          .json = json,
          .output = false,
          .reading = false};
}

// What the shared options said, ready to use.
struct CommonOptions {
  std::vector<std::string> files;  // the positional operands, in order
  std::string file;                // files[0], for one-file commands
  TraceOptions trace;              // filters, --symfs, --debug-dir, --threads, --signatures
  bool json = false;
  std::string output;  // -o; empty: stdout
};

// Adds the chosen shared options to `options` (for commands that parse
// themselves, like `incise archive diff`), and reads them back.
void addSharedOptions(boost::program_options::options_description& options,
                      const SharedOptions& shared);
Result<CommonOptions> readSharedOptions(const boost::program_options::variables_map& values,
                                        const SharedOptions& shared);

// "1,2" and repeated flags -> {1, 2}; an error naming the bad item otherwise.
Result<std::set<uint32_t>> parseIdList(const std::vector<std::string>& items,
                                       const std::string& option);

// Every value given to an option declared as a plain po::value<unsigned
// type> (a command's --limit) read by the one number parser
// (options/number_option.h), bounded by its type: Boost alone reads "-1" as
// 18446744073709551615. parse() does this; commands that parse themselves
// call it between parsing and po::store. Options that need tighter bounds
// declare them with options::boundedValue.
Status checkPlainNumbers(const boost::program_options::parsed_options& parsed,
                         const boost::program_options::options_description& described);

struct CommandHelp {
  std::string name;                              // "top": messages say "incise top: ..."
  std::vector<std::string> operands = {"FILE"};  // positional arguments, all required
  std::string summary;                           // what the command is for, a few lines
  std::string examples;                          // indented example lines
};

class CommandLine {
 public:
  // A report: one FILE and every shared option.
  CommandLine(std::string name, std::string summary, std::string examples);
  CommandLine(CommandHelp help, SharedOptions shared, std::ostream& out = std::cout,
              std::ostream& err = std::cerr);

  // The command's own options; add them before parse().
  boost::program_options::options_description& extra() { return extra_; }
  // nullopt: go on; otherwise the exit code (0 after --help, 2 on bad usage,
  // with the message printed to `err`).
  std::optional<int> parse(const std::vector<std::string>& args);

  const CommonOptions& options() const { return options_; }
  const boost::program_options::variables_map& values() const { return values_; }
  const std::string& name() const { return help_.name; }

  // Opens options().file with options().trace and installs the --where
  // conditions' context timelines (Trace::restrictToContexts); prints
  // "incise NAME: <error>" and returns null on failure (openFailure() then
  // says the exit code: 2 for a --where NAME the trace lacks). A damaged
  // trace opens with a warning saying what was salvaged (warnIfSalvaged).
  std::unique_ptr<Trace> openTrace() const;
  int openFailure() const { return open_failure_; }
  // "incise NAME: warning: FILE is damaged (...)" on `err` when the trace
  // had to be salvaged; for commands that open a format::Reader themselves.
  void warnIfSalvaged(const format::Reader& reader) const;
  // After a command has read its rows: a warning when chunks failed to decode.
  void warnIfChunksDamaged(Trace& trace) const;
  // Prints "incise NAME: message" and a pointer to --help; returns 2.
  int usageError(const std::string& message) const;
  void printHelp(std::ostream& out) const;

 private:
  CommandHelp help_;
  SharedOptions shared_;
  std::ostream& out_;
  std::ostream& err_;
  boost::program_options::options_description extra_;
  boost::program_options::variables_map values_;
  CommonOptions options_;
  mutable int open_failure_ = 1;
};

}  // namespace incise::analyzer
