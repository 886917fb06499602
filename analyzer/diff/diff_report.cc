#include "analyzer/diff/diff_report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "analyzer/diff/diff_flame_graph.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/stack_text.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

std::string signedPoints(double points) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.2f", points);
  return buffer;
}

std::string signedDuration(int64_t ns) {
  std::string magnitude = formatDurationNs(static_cast<uint64_t>(ns < 0 ? -ns : ns));
  return (ns < 0 ? "-" : ns > 0 ? "+" : "") + magnitude;
}

std::string rateText(double ns_per_s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", ns_per_s / 1e6);  // ms per second
  return buffer;
}

std::string signedRate(double ns_per_s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.3f", ns_per_s / 1e6);
  return buffer;
}

size_t shown(size_t rows, size_t limit) {
  return limit == 0 ? rows : std::min(rows, limit);
}

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<TraceProfile> profileOf(const std::string& path, const TraceOptions& options) {
  auto trace = Trace::open(path, options);
  if (!trace) return trace.error();
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

nlohmann::json lockSideJson(const LockSiteSummary& s, bool present) {
  if (!present) return nullptr;
  return {{"acquisitions", s.acquisitions}, {"wait_p50_ns", s.wait.p50},
          {"wait_p99_ns", s.wait.p99},      {"hold_p50_ns", s.hold.p50},
          {"hold_p99_ns", s.hold.p99},      {"hold_inferred", s.hold_inferred}};
}

void printFacts(const char* label, const TraceProfile& p, std::ostream& out) {
  const TraceFacts& f = p.facts;
  out << label << p.path << " (" << f.host << ", " << f.kernel << ", "
      << utcTimeText(f.start_wall_ns) << "): " << formatDurationNs(f.duration_ns) << ", "
      << f.samples << " samples";
  if (f.sample_hz) out << " at " << f.sample_hz << " Hz";
  out << "\n";
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
                        "rows per section (0: all)");
}

void addDiffOptions(po::options_description& options) {
  addSharedOptions(options, diffSharedOptions());
  addDiffOwnOptions(options);
}

Result<DiffOptions> diffOptionsFrom(const po::variables_map& values) {
  auto common = readSharedOptions(values, diffSharedOptions());
  if (!common) return common.error();
  DiffOptions options;
  options.trace = std::move(common->trace);
  options.json = common->json;
  options.flame_output = std::move(common->output);
  options.limit = values["limit"].as<size_t>();
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
  return result;
}

nlohmann::json diffJson(const DiffResult& r, const DiffOptions& options) {
  nlohmann::json comparability = nlohmann::json::array();
  for (const auto& note : r.comparability) {
    comparability.push_back(
        {{"kind", note.kind}, {"message", note.message}, {"action", note.action}});
  }
  nlohmann::json functions = nlohmann::json::array();
  for (size_t i = 0; i < shown(r.functions.size(), options.limit); ++i) {
    const FunctionDelta& f = r.functions[i];
    functions.push_back({{"name", f.name},
                         {"base_self_samples", f.base_self},
                         {"new_self_samples", f.new_self},
                         {"base_total_samples", f.base_total},
                         {"new_total_samples", f.new_total},
                         {"base_self_percent", roundedPercent(f.base_self_percent)},
                         {"new_self_percent", roundedPercent(f.new_self_percent)},
                         {"self_delta_points", roundedPercent(f.selfDelta())},
                         {"base_total_percent", roundedPercent(f.base_total_percent)},
                         {"new_total_percent", roundedPercent(f.new_total_percent)},
                         {"total_delta_points", roundedPercent(f.totalDelta())}});
  }
  nlohmann::json locks = nlohmann::json::array();
  for (size_t i = 0; i < shown(r.lock_sites.size(), options.limit); ++i) {
    const LockSiteDelta& l = r.lock_sites[i];
    locks.push_back({{"site", l.site},
                     {"context", l.context},
                     {"base", lockSideJson(l.base, l.in_base)},
                     {"new", lockSideJson(l.next, l.in_new)},
                     {"wait_p50_delta_ns", l.waitP50Delta()},
                     {"wait_p99_delta_ns", l.waitP99Delta()},
                     {"hold_p50_delta_ns", l.holdP50Delta()},
                     {"hold_p99_delta_ns", l.holdP99Delta()}});
  }
  nlohmann::json off_cpu = nlohmann::json::array();
  for (size_t i = 0; i < shown(r.off_cpu.size(), options.limit); ++i) {
    const OffCpuDelta& o = r.off_cpu[i];
    off_cpu.push_back({{"frames", o.root_first},
                       {"base_ns", o.base_ns},
                       {"new_ns", o.new_ns},
                       {"delta_ns", o.nsDelta()},
                       {"base_ns_per_s", std::llround(o.base_ns_per_s)},
                       {"new_ns_per_s", std::llround(o.new_ns_per_s)},
                       {"delta_ns_per_s", std::llround(o.perSecondDelta())}});
  }
  nlohmann::json doc = {{"base", factsJson(r.base)},
                        {"new", factsJson(r.next)},
                        {"comparability", comparability},
                        {"functions_total", r.functions.size()},
                        {"functions", functions},
                        {"lock_sites_total", r.lock_sites.size()},
                        {"lock_sites", locks},
                        {"off_cpu_stacks_total", r.off_cpu.size()},
                        {"off_cpu_stacks", off_cpu}};
  if (!options.notes.empty()) doc["notes"] = options.notes;
  return doc;
}

void printDiff(const DiffResult& r, const DiffOptions& options, std::ostream& out) {
  out << "incise diff\n";
  printFacts("base: ", r.base, out);
  printFacts("new:  ", r.next, out);
  for (const auto& note : options.notes) out << "note: " << note << "\n";

  out << "\ncomparability:\n";
  if (r.comparability.empty()) {
    out << "  same binaries (build-ids match), hosts and kernels; durations and sample rates "
           "comparable\n";
  }
  for (const auto& note : r.comparability) {
    out << "  " << note.kind << ": " << note.message << "\n    -> " << note.action << "\n";
  }

  out << "\nfunctions: share of each trace's CPU samples (%); change in percentage points\n";
  Table functions({{"SELF CHG", Align::kRight},
                   {"BASE SELF%", Align::kRight},
                   {"NEW SELF%", Align::kRight},
                   {"TOTAL CHG", Align::kRight},
                   {"BASE TOTAL%", Align::kRight},
                   {"NEW TOTAL%", Align::kRight},
                   {"FUNCTION", Align::kLeft, 100}});
  for (size_t i = 0; i < shown(r.functions.size(), options.limit); ++i) {
    const FunctionDelta& f = r.functions[i];
    functions.addRow({signedPoints(f.selfDelta()), formatPercent(f.base_self_percent),
                      formatPercent(f.new_self_percent), signedPoints(f.totalDelta()),
                      formatPercent(f.base_total_percent), formatPercent(f.new_total_percent),
                      f.name});
  }
  functions.render(out);

  out << "\nlock sites: wait and hold percentiles, base -> new\n";
  if (r.lock_sites.empty()) out << "  no lock events in either trace\n";
  Table locks({{"SITE", Align::kLeft, 48},
               {"ACQ BASE", Align::kRight},
               {"ACQ NEW", Align::kRight},
               {"WAIT P50", Align::kRight},
               {"CHG", Align::kRight},
               {"WAIT P99", Align::kRight},
               {"CHG", Align::kRight},
               {"HOLD P50", Align::kRight},
               {"CHG", Align::kRight},
               {"HOLD P99", Align::kRight},
               {"CHG", Align::kRight}});
  auto pair = [](uint64_t before, uint64_t after) {
    return formatDurationNs(before) + " -> " + formatDurationNs(after);
  };
  for (size_t i = 0; i < shown(r.lock_sites.size(), options.limit); ++i) {
    const LockSiteDelta& l = r.lock_sites[i];
    locks.addRow({l.context, formatCount(l.base.acquisitions), formatCount(l.next.acquisitions),
                  pair(l.base.wait.p50, l.next.wait.p50), signedDuration(l.waitP50Delta()),
                  pair(l.base.wait.p99, l.next.wait.p99), signedDuration(l.waitP99Delta()),
                  pair(l.base.hold.p50, l.next.hold.p50), signedDuration(l.holdP50Delta()),
                  pair(l.base.hold.p99, l.next.hold.p99), signedDuration(l.holdP99Delta())});
  }
  if (!r.lock_sites.empty()) locks.render(out);

  out << "\noff-CPU (blocked) per stack: ms per second of trace, and total time\n";
  if (r.off_cpu.empty()) out << "  no blocked off-CPU time in either trace\n";
  Table off_cpu({{"CHG ms/s", Align::kRight},
                 {"BASE ms/s", Align::kRight},
                 {"NEW ms/s", Align::kRight},
                 {"BASE", Align::kRight},
                 {"NEW", Align::kRight},
                 {"STACK", Align::kLeft, 100}});
  for (size_t i = 0; i < shown(r.off_cpu.size(), options.limit); ++i) {
    const OffCpuDelta& o = r.off_cpu[i];
    off_cpu.addRow({signedRate(o.perSecondDelta()), rateText(o.base_ns_per_s),
                    rateText(o.new_ns_per_s), formatDurationNs(o.base_ns),
                    formatDurationNs(o.new_ns), stackLine(o.root_first)});
  }
  if (!r.off_cpu.empty()) off_cpu.render(out);
}

int runDiffReport(const DiffOptions& options, std::ostream& out) {
  auto result = computeDiff(options);
  if (!result) {
    std::cerr << "incise diff: " << result.error().message() << "\n";
    return 1;
  }
  if (options.json) {
    writeJson(out, diffJson(*result, options));
  } else {
    printDiff(*result, options, out);
  }
  if (options.flame_output.empty()) return 0;
  std::ofstream file(options.flame_output);
  DiffFlameGraph graph(result->base.on_cpu, result->next.on_cpu);
  FlameGraphOptions flame;
  flame.title = "incise diff: " + result->base.path + " -> " + result->next.path +
                " (width: larger share; red grew, blue shrank)";
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
