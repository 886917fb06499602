// incise flame: flame graphs and folded stacks — on-CPU samples by default,
// blocked off-CPU time with --off-cpu, lock wait time with --locks, bytes
// allocated with --alloc, bytes still live at the end with --live; with
// --by context:NAME, one tower per value of a context under a root frame.
#include <iostream>

#include "analyzer/analyses/context/trace_context_timelines.h"
#include "analyzer/analyses/profile/flame_weights.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/exit_without_teardown.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/model/stack_namer.h"
#include "analyzer/render/flame_graph.h"
#include "analyzer/render/folded_stacks.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"
#include "analyzer/reports/group_columns.h"
#include "analyzer/reports/report_header.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// --format wins; else the -o extension; else folded on stdout, html in a file.
std::string outputFormat(const std::string& requested, const std::string& path) {
  if (!requested.empty()) return requested;
  if (path.empty()) return "folded";
  if (endsWith(path, ".svg")) return "svg";
  if (endsWith(path, ".folded") || endsWith(path, ".txt")) return "folded";
  return "html";
}

// --by context:NAME: each value's stacks under a root frame "NAME=VALUE"
// ("NAME=?" where the value is unknown).
FoldedStacks foldedByValue(Trace& trace, FlameWeighting weighting, const std::string& name,
                           const ContextTimeline& timeline) {
  StackNamer namer(trace, FrameGrouping::kFunction);
  FoldedStacks folded;
  for (const auto& [value, weights] : collectFlameWeightsByValue(trace, weighting, timeline)) {
    const std::string root = name + "=" + (value ? timeline.text().text(*value) : "?");
    addFoldedStacks(folded, weights.named(namer), root);
  }
  return folded;
}

}  // namespace

int runFlame(const std::vector<std::string>& args) {
  CommandLine cli(
      "flame",
      "Flame graph of CPU samples (default), of blocked off-CPU time (--off-cpu: switch-out\n"
      "with prev_state != 0 -> next switch-in, at the off-CPU stack) or of lock wait time\n"
      "(--locks: acquired - requested, at the acquire stack), of bytes allocated (--alloc:\n"
      "estimated from the samples of a recording with --alloc) or of bytes still allocated at\n"
      "the end (--live: the leaks, from the sampled blocks never freed). Writes folded stacks\n"
      "(\"root;...;leaf weight\") to stdout without -o; with -o the extension picks the\n"
      "format: .html (interactive: click to zoom, search), .svg, .folded.\n"
      "--by context:NAME puts each value of a context (--context NAME=...) under a root frame\n"
      "NAME=VALUE (NAME=? where unknown): the value the thread held at the sample, at the\n"
      "switch-out (--off-cpu) or at the lock request (--locks).",
      "  incise flame app.trace > app.folded\n"
      "  incise flame app.trace -o app.html              # open in a browser\n"
      "  incise flame app.trace --off-cpu -o offcpu.svg\n"
      "  incise flame app.trace --locks --comm worker -o locks.html\n"
      "  incise flame app.trace --alloc -o alloc.html    # bytes allocated per stack\n"
      "  incise flame app.trace --live -o leaks.html     # bytes never freed per stack\n"
      "  incise flame app.trace --where req=42 -o req42.html   # one request (--context req=...)\n"
      "  incise flame app.trace --off-cpu --where req=42 -o req42-off.html\n"
      "  incise flame app.trace --by context:req -o per-request.html   # a tower per request\n");
  // clang-format off
  cli.extra().add_options()
      ("format", po::value<std::string>(), "html, svg or folded (default: from -o, else folded)")
      ("off-cpu", po::bool_switch(), "weigh by blocked off-CPU time (ns)")
      ("locks", po::bool_switch(), "weigh by lock wait time (ns)")
      ("alloc", po::bool_switch(), "weigh by bytes allocated (a recording with --alloc)")
      ("live", po::bool_switch(), "weigh by bytes allocated and not freed by the end")
      ("title", po::value<std::string>(), "title of the graph")
      ("by", po::value<std::string>()->default_value("stack"),
       "stack, or context:NAME (a root frame per value of --context NAME=...; not with\n"
       "--alloc or --live)");
  // clang-format on
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  bool off_cpu = cli.values()["off-cpu"].as<bool>();
  bool locks = cli.values()["locks"].as<bool>();
  bool alloc = cli.values()["alloc"].as<bool>();
  bool live = cli.values()["live"].as<bool>();
  if (int{off_cpu} + int{locks} + int{alloc} + int{live} > 1)
    return cli.usageError("choose one of --off-cpu, --locks, --alloc and --live");
  std::string format =
      outputFormat(cli.values().count("format") ? cli.values()["format"].as<std::string>() : "",
                   cli.options().output);
  if (format != "html" && format != "svg" && format != "folded") {
    return cli.usageError("--format '" + format + "': expected html, svg or folded");
  }
  FlameWeighting weighting = off_cpu ? FlameWeighting::kOffCpu
                             : locks ? FlameWeighting::kLocks
                             : alloc ? FlameWeighting::kAllocated
                             : live  ? FlameWeighting::kLive
                                     : FlameWeighting::kOnCpu;

  const std::string& by = cli.values()["by"].as<std::string>();
  const std::optional<std::string> context = contextGrouping(by);
  if (by != "stack" && !context)
    return cli.usageError("--by '" + by + "': expected stack or context:NAME");
  if (context && (alloc || live))
    return cli.usageError("--by " + by +
                          " with --alloc or --live: allocations are not split by "
                          "context");

  std::unique_ptr<Trace> trace = cli.openTrace();
  if (!trace) return cli.openFailure();
  FoldedStacks folded;
  if (context) {
    Result<ContextTimeline> timeline = readContextTimeline(*trace, *context);
    if (!timeline) return cli.usageError("--by " + by + ": " + timeline.error().message());
    folded = foldedByValue(*trace, weighting, *context, *timeline);
  } else {
    StackNamer namer(*trace, FrameGrouping::kFunction);
    folded = foldedStacks(collectFlameWeights(*trace, weighting).named(namer));
  }

  FlameGraphOptions options;
  options.unit = flameUnit(*trace, weighting);
  // Samples of an event that is not a clock weigh by their period (events).
  std::string what = off_cpu                     ? "off-CPU time (blocked)"
                     : locks                     ? "lock wait time"
                     : alloc                     ? "bytes allocated (sampled)"
                     : live                      ? "bytes live at the end (sampled)"
                     : options.unit == "samples" ? "on-CPU samples"
                                                 : options.unit + " (events, by sample period)";
  options.title = cli.values().count("title") ? cli.values()["title"].as<std::string>()
                                              : trace->path() + ": " + what;
  if (options.unit == "ns") options.weights = FlameWeights::kNanoseconds;
  options.palette = off_cpu ? FlamePalette::kOffCpu
                    : locks ? FlamePalette::kLocks
                            : FlamePalette::kCpu;

  int status = writeReport(cli, [&](std::ostream& out) {
    if (cli.options().json) {
      nlohmann::json stacks = nlohmann::json::array();
      for (const auto& [path, weight] : folded.paths()) {
        stacks.push_back({{"frames", FoldedStacks::split(path)}, {"weight", weight}});
      }
      writeJson(out, {{"header", reportHeaderJson("flame", *trace)},
                      {"weight", what},
                      {"unit", options.unit},
                      {"total", folded.total()},
                      {"stacks", stacks}});
    } else if (format == "folded") {
      folded.write(out);
    } else if (format == "svg") {
      writeFlameGraphSvg(folded, options, out);
    } else {
      writeFlameGraphHtml(folded, options, out);
    }
  });
  if (status != 0 || cli.options().json) return exitWithoutTeardown(status);
  // Folded stacks on stdout must stay machine-readable: the header goes to stderr then.
  std::ostream& note = cli.options().output.empty() ? std::cerr : std::cout;
  if (!cli.options().output.empty() || folded.paths().empty()) {
    printReportHeader(note, "flame", *trace);
  } else {
    for (const auto& warning : reportWarnings(*trace, trace->losses())) {
      std::cerr << "warning: " << warning << "\n";
    }
  }
  if (!cli.options().output.empty()) {
    std::string total = options.weights == FlameWeights::kNanoseconds
                            ? formatDurationNs(folded.total())
                            : std::to_string(folded.total()) + ' ' + options.unit;
    note << "wrote " << format << " flame graph of " << terminalText(what) << " (" << total << ", "
         << folded.paths().size() << " stacks) to " << cli.options().output << "\n";
  } else if (folded.paths().empty()) {
    note << "no " << terminalText(what) << " in this trace (for the filters given)\n";
  }
  return exitWithoutTeardown(0);
}

}  // namespace incise::analyzer
