// incise export FILE --format pprof|chrome|speedscope|folded [-o OUT]:
// a trace in another tool's format.
#include <unistd.h>

#include <fstream>
#include <iostream>

#include "analyzer/analyses/profile/flame_weights.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/export/chrome_trace_export.h"
#include "analyzer/export/pprof_export.h"
#include "analyzer/export/speedscope_export.h"
#include "analyzer/model/stack_namer.h"
#include "analyzer/render/folded_stacks.h"
#include "analyzer/render/terminal_text.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

void writeFolded(Trace& trace, std::ostream& out) {
  StackNamer namer(trace, FrameGrouping::kFunction);
  foldedStacks(collectFlameWeights(trace, FlameWeighting::kOnCpu).named(namer)).write(out);
}

}  // namespace

int runExport(const std::vector<std::string>& args) {
  CommandLine cli(
      "export",
      "Writes a trace in another tool's format (--format):\n"
      "  pprof       gzipped profile.proto of the CPU samples: go tool pprof, Pyroscope, Parca;\n"
      "              with --alloc, of the sampled allocations (record --alloc), as Go's heap\n"
      "              profile: alloc_space, alloc_objects, inuse_space (live at the end)\n"
      "  chrome      Chrome Trace Event JSON for ui.perfetto.dev / chrome://tracing: per followed\n"
      "              thread running/runnable/blocked slices (as incise sched counts them), lock\n"
      "              waits and holds, samples as instants\n"
      "  speedscope  speedscope.app JSON: a sampled profile per thread, in time order\n"
      "  folded      Brendan Gregg's folded stacks (as incise flame writes them)\n"
      "pprof is binary: it needs -o unless stdout is redirected.",
      "  incise export app.trace --format pprof -o app.pb.gz && go tool pprof -top app.pb.gz\n"
      "  incise export app.trace --format pprof --alloc -o heap.pb.gz\n"
      "  go tool pprof -sample_index=alloc_space -top heap.pb.gz\n"
      "  incise export app.trace --format chrome -o app.json     # open in ui.perfetto.dev\n"
      "  incise export app.trace --format speedscope -o app.speedscope.json\n"
      "  incise export app.trace --format folded --comm worker > worker.folded\n");
  // clang-format off
  cli.extra().add_options()
      ("format", po::value<std::string>(), "pprof, chrome, speedscope or folded")
      ("alloc", po::bool_switch(),
       "pprof: the sampled allocations instead of the CPU samples")
      ("bystanders", po::bool_switch(),
       "chrome: also draw threads the recorder did not follow (their runs seen start to end)");
  // clang-format on
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  if (!cli.values().count("format")) return cli.usageError("missing --format");
  std::string format = cli.values()["format"].as<std::string>();
  if (format != "pprof" && format != "chrome" && format != "speedscope" && format != "folded") {
    return cli.usageError("--format '" + format +
                          "': expected pprof, chrome, speedscope or folded");
  }
  if (cli.options().json) return cli.usageError("--json does not apply to export; use --format");
  const bool alloc = cli.values()["alloc"].as<bool>();
  if (alloc && format != "pprof") {
    return cli.usageError(
        "--alloc applies to --format pprof (for flame graphs: incise flame "
        "--alloc or --live)");
  }
  if (format == "pprof" && cli.options().output.empty() && isatty(STDOUT_FILENO)) {
    return cli.usageError("pprof is gzipped binary: give -o FILE or redirect stdout");
  }

  std::unique_ptr<Trace> trace = cli.openTrace();
  if (!trace) return cli.openFailure();
  if (alloc && trace->reader().rows(format::EventKind::kAlloc) == 0) {
    std::cerr << "incise export: no sampled allocations in " << terminalText(cli.options().file)
              << ": record with incise record --alloc -- CMD\n";
    return 1;
  }
  Status status = Status::ok();
  int exit = writeReport(cli, [&](std::ostream& out) {
    if (format == "pprof") {
      status =
          writePprof(*trace, out, alloc ? PprofProfileKind::kAllocations : PprofProfileKind::kCpu);
    } else if (format == "chrome") {
      writeChromeTrace(*trace, out, {.bystanders = cli.values()["bystanders"].as<bool>()});
    } else if (format == "speedscope") {
      writeSpeedscope(*trace, out);
    } else {
      writeFolded(*trace, out);
    }
  });
  cli.warnIfChunksDamaged(*trace);
  if (!status) {
    std::cerr << "incise export: " << status.message() << "\n";
    return 1;
  }
  if (exit == 0 && !cli.options().output.empty()) {
    std::cerr << "incise export: wrote " << format << " to " << cli.options().output << "\n";
  }
  return exit;
}

}  // namespace incise::analyzer
