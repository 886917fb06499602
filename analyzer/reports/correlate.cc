// `incise correlate`: the story report. Which lock holders were switched
// out inside their critical sections (preempted or blocked) and how much
// waiting that caused; what holders did inside sections (CPU samples, page
// faults, by stack); and who woke the longest waiters, from where. A trace
// with timed calls (latency rows) ends with its slowest calls, each split
// into on-CPU, runnable, lock wait and other blocked time.
//
// The analysis is correlate_analysis.h (one time-ordered pass, memory per
// group and site), the ranking correlate_findings.h, the words
// correlate_story.h; this file is the command.
#include <nlohmann/json.hpp>
#include <string>

#include "analyzer/analyses/correlate/correlate_analysis.h"
#include "analyzer/analyses/latency/slow_call_split.h"
#include "analyzer/analyses/locks/lock_sites.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/json_output.h"
#include "analyzer/reports/correlate_story.h"
#include "analyzer/reports/lock_report_command.h"
#include "analyzer/reports/lock_report_text.h"
#include "analyzer/reports/slow_calls_text.h"

namespace incise::analyzer {
namespace {

// Each kept call holds its blocked spans until the lock pass: a bound on memory.
constexpr size_t kMaxSlowCalls = 10'000;

struct CorrelateOptions {
  size_t limit = 10;
  size_t chains = 5;
  size_t slow_calls = 5;
};

int reportCorrelate(Trace& trace, const ReportOutput& output, const CorrelateOptions& options) {
  LockSites sites(trace.symbolizer(), trace.stacks());
  Correlation correlation = correlateTrace(trace, sites, options.chains);
  CorrelateStory story(trace, correlation, sites);
  std::vector<SlowCallSplit> slow_calls = splitSlowCalls(trace, options.slow_calls);
  if (output.json) {
    nlohmann::json doc = story.json(options.limit);
    doc["header"] = output.headerJson();
    doc["lock_mode"] = lockModeName(correlation.counts.mode);
    doc["recorded_lock_mode"] = trace.header().options.lock_mode;
    doc["inferred_sections"] = correlation.counts.inferred_sections;
    doc["go_holds"] = goHoldsJson(correlation.counts.go_holds);
    doc["go_unplaced_releases"] = correlation.counts.go_holds.unplaced_releases;
    doc["slow_calls"] = slowCallsJson(trace, slow_calls);
    writeJson(output.out(), doc);
    return 0;
  }
  output.printHeader();
  story.print(output.out(), options.limit);
  if (!slow_calls.empty()) printSlowCalls(trace, slow_calls, output.out());
  return 0;
}

}  // namespace

int runCorrelate(const std::vector<std::string>& args) {
  CorrelateOptions options;
  ReportCommand command(
      "correlate",
      "The story: lock holders preempted or faulting inside critical sections, and the waiting\n"
      "they caused, as ranked findings; then who woke the longest waiters, as a tree.\n"
      "Filters choose whose story it is, not what explains it: a holder or waker outside\n"
      "--pid/--tid/--comm still explains the waits of the threads shown, and a holder\n"
      "switched out before the --time window is still off-CPU inside it. --where keeps the\n"
      "waits that began while their thread held the values; a holder's sections are charged\n"
      "whole, whatever its own context (no --by context:NAME: a finding is one holder's\n"
      "section, which the waiters of many values share; incise waits --by context:NAME\n"
      "splits wait time per value).\n"
      "A trace with timed calls (--trace, --syscalls, --block-io, --io-uring) ends with\n"
      "its slowest calls, each split into on-CPU, runnable, lock wait (and who released\n"
      "the lock) and other blocked time.",
      "  incise correlate app.trace                # the findings and the wake chains\n"
      "  incise correlate app.trace --comm api     # what held up the api threads, and why\n"
      "  incise correlate app.trace --time 2..3    # what happened between 2 s and 3 s\n"
      "  incise correlate app.trace --where req=42 # what held up one request (--context)\n"
      "  incise correlate app.trace --limit 0      # every finding\n"
      "  incise correlate io.trace --slow-calls 20 # where the 20 slowest timed calls went\n"
      "  incise correlate app.trace --json         # every figure, as JSON\n",
      // Holders and waiters move between CPUs: a CPU filter would cut sections apart.
      SharedOptions{.cpu = false});
  command.options().add_options()                                                           //
      ("limit", boost::program_options::value(&options.limit)->default_value(10),           //
       "findings to show, and JSON rows per table (0 = all)")                               //
      ("chains", boost::program_options::value(&options.chains)->default_value(5),          //
       "longest waits whose wake chains to follow")                                         //
      ("slow-calls", boost::program_options::value(&options.slow_calls)->default_value(5),  //
       "slowest timed calls to split (0 = none)");
  return command.run(
      args,
      [&](Trace& trace, const ReportOutput& output) {
        return reportCorrelate(trace, output, options);
      },
      [&]() -> std::string {
        if (options.slow_calls <= kMaxSlowCalls) return "";
        return "--slow-calls " + std::to_string(options.slow_calls) + ": at most " +
               std::to_string(kMaxSlowCalls);
      });
}

}  // namespace incise::analyzer
