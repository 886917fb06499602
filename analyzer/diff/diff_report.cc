#include "analyzer/diff/diff_report.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>

#include "analyzer/analyses/context/trace_context_timelines.h"
#include "analyzer/diff/diff_flame_graph.h"
#include "analyzer/diff/diff_sections.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/salvage_notice.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<TraceProfile> profileOf(const std::string& path, const TraceOptions& options) {
  auto trace = Trace::open(path, options);
  if (!trace) return trace.error();
  if (auto notice = salvageNotice(path, (*trace)->reader().recovery())) {
    std::cerr << "incise diff: " << *notice << "\n";
  }
  INCISE_RETURN_IF_ERROR(holdToWhere(**trace));
  return collectTraceProfile(**trace);
}

nlohmann::json factsJson(const TraceProfile& profile) {
  const TraceFacts& f = profile.facts;
  return {{"path", profile.path},
          {"host", f.host},
          {"kernel", f.kernel},
          {"command", f.command},
          {"start", utcTimeText(f.start_wall_ns)},
          {"duration_ns", f.duration_ns},
          {"window_ns", profile.window_ns},
          {"sample_hz", f.sample_hz},
          {"samples", f.samples},
          {"build_ids", f.build_ids}};
}

void printFacts(const char* label, const TraceProfile& p, std::ostream& out) {
  const TraceFacts& f = p.facts;
  out << label << terminalText(p.path) << " (" << terminalText(f.host) << ", "
      << terminalText(f.kernel) << ", " << utcTimeText(f.start_wall_ns)
      << "): " << formatDurationNs(f.duration_ns) << ", " << f.samples << " samples";
  if (f.sample_hz) out << " at " << f.sample_hz << " Hz";
  out << "\n";
}

// Each --flame choice: its name, what the graph says it weighs, and where
// a trace's profile keeps those call paths.
struct FlameChoice {
  DiffFlameWeighting weighting;
  const char* name;
  const char* subject;
  FoldedStacks TraceProfile::*stacks;
};
constexpr FlameChoice kFlameChoices[] = {
    {DiffFlameWeighting::kOnCpu, "cpu", "CPU samples", &TraceProfile::on_cpu},
    {DiffFlameWeighting::kAllocated, "alloc", "bytes allocated", &TraceProfile::allocated},
    {DiffFlameWeighting::kLive, "live", "bytes live at the end", &TraceProfile::live},
};

const FlameChoice& flameChoice(DiffFlameWeighting weighting) {
  for (const FlameChoice& choice : kFlameChoices)
    if (choice.weighting == weighting) return choice;
  return kFlameChoices[0];
}

}  // namespace

SharedOptions diffSharedOptions() {
  return {.pid_tid = false,
          .cpu = false,
          .json_help = "print JSON instead of tables",
          .output_help = "write the differential flame graph here (.svg: SVG, else HTML)"};
}

void addDiffOwnOptions(po::options_description& options) {
  options.add_options()("limit", po::value<size_t>()->default_value(20),
                        "rows per section (0: all)")(
      "flame", po::value<std::string>()->default_value("cpu"),
      "what -o's flame graph weighs: cpu (CPU samples), alloc (bytes allocated) or live (bytes "
      "still allocated at the end); alloc and live need recordings made with --alloc");
}

void addDiffOptions(po::options_description& options) {
  addSharedOptions(options, diffSharedOptions());
  addDiffOwnOptions(options);
}

Result<DiffOptions> diffOptionsFrom(const po::variables_map& values) {
  INCISE_ASSIGN_OR_RETURN(auto common, readSharedOptions(values, diffSharedOptions()));
  DiffOptions options;
  options.trace = std::move(common.trace);
  options.json = common.json;
  options.flame_output = std::move(common.output);
  options.limit = values["limit"].as<size_t>();
  const std::string& flame = values["flame"].as<std::string>();
  const FlameChoice* choice = std::find_if(std::begin(kFlameChoices), std::end(kFlameChoices),
                                           [&](const FlameChoice& c) { return flame == c.name; });
  if (choice == std::end(kFlameChoices))
    return Error("--flame '" + flame + "': expected cpu, alloc or live");
  options.flame = choice->weighting;
  return options;
}

Result<DiffResult> computeDiff(const DiffOptions& options) {
  auto base = profileOf(options.base_path, options.trace);
  if (!base) return base.error().context("base");
  auto next = profileOf(options.new_path, options.trace);
  if (!next) return next.error().context("new");
  DiffResult result;
  result.base = base.take();
  result.next = next.take();
  result.comparability = assessComparability(result.base.facts, result.next.facts);
  result.functions = diffFunctions(result.base.functions, result.next.functions);
  result.lock_sites = diffLockSites(result.base.lock_sites, result.next.lock_sites);
  result.off_cpu = diffOffCpu(result.base.off_cpu, result.base.window_ns, result.next.off_cpu,
                              result.next.window_ns);
  result.latency = diffLatency(result.base.latency, result.base.window_ns, result.next.latency,
                               result.next.window_ns);
  result.alloc_sites = diffAllocSites(result.base.alloc_sites, result.base.window_ns,
                                      result.next.alloc_sites, result.next.window_ns);
  return result;
}

nlohmann::json diffJson(const DiffResult& r, const DiffOptions& options) {
  nlohmann::json comparability = nlohmann::json::array();
  for (const auto& note : r.comparability) {
    comparability.push_back(
        {{"kind", note.kind}, {"message", note.message}, {"action", note.action}});
  }
  nlohmann::json doc = {{"base", factsJson(r.base)},
                        {"new", factsJson(r.next)},
                        {"comparability", comparability},
                        {"functions_total", r.functions.size()},
                        {"functions", functionDeltasJson(r.functions, options.limit)},
                        {"lock_sites_total", r.lock_sites.size()},
                        {"lock_sites", lockSiteDeltasJson(r.lock_sites, options.limit)},
                        {"off_cpu_stacks_total", r.off_cpu.size()},
                        {"off_cpu_stacks", offCpuDeltasJson(r.off_cpu, options.limit)},
                        {"latency_total", r.latency.size()},
                        {"latency", latencyDeltasJson(r.latency, options.limit)},
                        {"alloc_sites_total", r.alloc_sites.size()},
                        {"alloc_sites", allocSiteDeltasJson(r.alloc_sites, options.limit)}};
  if (!options.notes.empty()) doc["notes"] = options.notes;
  return doc;
}

void printDiff(const DiffResult& r, const DiffOptions& options, std::ostream& out) {
  out << "incise diff\n";
  printFacts("base: ", r.base, out);
  printFacts("new:  ", r.next, out);
  for (const auto& note : options.notes) out << "note: " << terminalText(note) << "\n";

  out << "\ncomparability:\n";
  if (r.comparability.empty()) {
    out << "  same binaries (build-ids match), hosts and kernels; durations and sample rates "
           "comparable\n";
  }
  for (const auto& note : r.comparability) {
    out << "  " << note.kind << ": " << terminalText(note.message) << "\n    -> "
        << terminalText(note.action) << "\n";
  }

  out << "\nfunctions: share of each trace's CPU samples (%); change in percentage points\n";
  printFunctionDeltas(r.functions, options.limit, out);

  out << "\nlock sites: wait and hold percentiles, base -> new\n";
  if (r.lock_sites.empty()) out << "  no lock events in either trace\n";
  printLockSiteDeltas(r.lock_sites, options.limit, out);

  out << "\noff-CPU (blocked) per stack: ms per second of trace, and total time\n";
  if (r.off_cpu.empty()) out << "  no blocked off-CPU time in either trace\n";
  printOffCpuDeltas(r.off_cpu, options.limit, out);

  // Most traces time nothing and sample no allocations: no empty sections for them.
  if (!r.latency.empty()) {
    out << "\nlatency per traced function, syscall, device and opcode: calls per second and "
           "percentiles, base -> new\n";
    printLatencyDeltas(r.latency, options.limit, out);
  }
  if (!r.alloc_sites.empty()) {
    out << "\nallocations per site (--alloc): bytes allocated per second of trace, and bytes "
           "still live at the end, base -> new\n";
    printAllocSiteDeltas(r.alloc_sites, options.limit, out);
  }
}

int runDiffReport(const DiffOptions& options, std::ostream& out) {
  auto result = computeDiff(options);
  if (!result) {
    std::cerr << "incise diff: " << terminalText(result.error().message()) << "\n";
    return 1;
  }
  const FlameChoice& flame_choice = flameChoice(options.flame);
  const FoldedStacks& base_stacks = result->base.*flame_choice.stacks;
  const FoldedStacks& new_stacks = result->next.*flame_choice.stacks;
  if (!options.flame_output.empty() && options.flame != DiffFlameWeighting::kOnCpu &&
      base_stacks.total() == 0 && new_stacks.total() == 0) {
    std::cerr << "incise diff: --flame " << flame_choice.name
              << ": neither trace has sampled allocations to draw (record with --alloc)\n";
    return 1;
  }
  if (options.json) {
    writeJson(out, diffJson(*result, options));
  } else {
    printDiff(*result, options, out);
  }
  if (options.flame_output.empty()) return 0;
  std::ofstream file(options.flame_output);
  DiffFlameGraph graph(base_stacks, new_stacks);
  FlameGraphOptions flame;
  flame.title = "incise diff: " + result->base.path + " -> " + result->next.path;
  flame.subtitle = std::string(flame_choice.subject) +
                   "; width: the larger share of the two; red grew, blue shrank, grey unchanged";
  if (endsWith(options.flame_output, ".svg")) {
    graph.writeSvg(flame, file);
  } else {
    graph.writeHtml(flame, file);
  }
  file.close();
  if (!file) {
    std::cerr << "incise diff: cannot write " << options.flame_output << "\n";
    return 1;
  }
  (options.json ? std::cerr : out)
      << "wrote differential flame graph to " << options.flame_output << "\n";
  return 0;
}

}  // namespace incise::analyzer
