// `incise diff` as a function of two trace paths, so `incise diff` and
// `incise archive diff` share it: opens both traces with the same filters,
// collects their profiles, and prints the comparability section, the
// function, lock-site, off-CPU, latency and allocation-site deltas (a table, or JSON with --json),
// and writes the differential flame graph when asked (-o x.html / x.svg).
//
//   CommandLine cli({.name = "diff", .operands = {"BASE", "NEW"}, ...}, diffSharedOptions());
//   addDiffOwnOptions(cli.extra());
//   if (auto exit = cli.parse(args)) return *exit;
//   Result<DiffOptions> options = diffOptionsFrom(cli.values());
//   options->base_path = "old.trace"; options->new_path = "new.trace";
//   return runDiffReport(*options, std::cout);
#pragma once

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "analyzer/cli/command_line.h"
#include "analyzer/diff/comparability.h"
#include "analyzer/diff/profile_diff.h"
#include "analyzer/model/trace_options.h"

namespace incise::analyzer {

// What the differential flame graph weighs: CPU samples, or the sampled
// allocations' bytes, allocated or still live at the end (--alloc).
enum class DiffFlameWeighting { kOnCpu, kAllocated, kLive };

struct DiffOptions {
  std::string base_path;
  std::string new_path;
  TraceOptions trace;  // filters, symbol paths: the same for both traces
  bool json = false;
  std::string flame_output;  // -o: the differential flame graph (.svg, else HTML)
  DiffFlameWeighting flame = DiffFlameWeighting::kOnCpu;  // --flame
  size_t limit = 20;                                      // rows per section; 0 = all
  std::vector<std::string> notes;  // extra lines for the header (e.g. how a selector resolved)
};

// The shared options a diff takes (analyzer/cli/command_line.h): --json, -o
// (the flame graph), --comm, --time, --symfs, --debug-dir, --threads,
// --signatures. Pids, tids and cpus differ between two runs: no filter on them.
SharedOptions diffSharedOptions();
// --limit and --flame, diff's own options.
void addDiffOwnOptions(boost::program_options::options_description& options);
// The shared options plus --limit and --flame, for commands that parse themselves
// (`incise archive diff`), and what they said.
void addDiffOptions(boost::program_options::options_description& options);
Result<DiffOptions> diffOptionsFrom(const boost::program_options::variables_map& values);

// Everything the report shows, as data (the JSON document is this).
struct DiffResult {
  TraceProfile base, next;
  std::vector<ComparabilityNote> comparability;
  std::vector<FunctionDelta> functions;
  std::vector<LockSiteDelta> lock_sites;
  std::vector<OffCpuDelta> off_cpu;
  std::vector<LatencyDelta> latency;
  std::vector<AllocSiteDelta> alloc_sites;
};

Result<DiffResult> computeDiff(const DiffOptions& options);
nlohmann::json diffJson(const DiffResult& result, const DiffOptions& options);
void printDiff(const DiffResult& result, const DiffOptions& options, std::ostream& out);

// Exit code: 0, 1 when a trace cannot be read or the flame graph not written.
int runDiffReport(const DiffOptions& options, std::ostream& out);

}  // namespace incise::analyzer
