// incise requests: one row per value of a context (--context NAME=SYMBOL at
// record time, such as a request id): its threads, wall time, and where
// that time went — on-CPU, runnable, lock wait, other blocked — with its
// page faults; slowest first.
#include <algorithm>

#include "analyzer/analyses/requests/request_split.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"
#include "analyzer/reports/group_columns.h"
#include "analyzer/reports/report_header.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

std::string threadList(const std::vector<uint32_t>& threads) {
  std::string text;
  for (uint32_t tid : threads) text += (text.empty() ? "" : ",") + std::to_string(tid);
  return text;
}

}  // namespace

int runRequests(const std::vector<std::string>& args) {
  CommandLine cli(
      "requests",
      "One row per value of a context recorded with --context NAME=SYMBOL (a request id in a\n"
      "thread_local): its threads, its wall time from its first to its last moment on any\n"
      "of them, and where that time went: on-CPU, runnable (waiting for a cpu), lock wait,\n"
      "other blocked time (I/O, sleeps, condvars), unobserved; and its page faults (with\n"
      "--page-faults). Slowest first. A value changes between two reads of its thread\n"
      "(samples, switches, wake-ups, lock calls, faults) and is placed halfway; 0 is no\n"
      "request. Blocks shorter than --sched-min-block read as on-CPU: record with\n"
      "--sched-min-block 0 for exact splits.",
      "  incise requests app.trace --by req\n"
      "  incise requests app.trace --by req --limit 0 --json\n");
  // clang-format off
  cli.extra().add_options()
      ("by", po::value<std::string>(), "the context NAME to group by (required)")
      ("limit", po::value<size_t>()->default_value(20), "requests to print, slowest first (0: all)");
  // clang-format on
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  if (!cli.values().count("by")) return cli.usageError("--by NAME is required");
  const std::string name = cli.values()["by"].as<std::string>();
  const size_t limit = cli.values()["limit"].as<size_t>();
  std::unique_ptr<Trace> trace = cli.openTrace();
  if (!trace) return cli.openFailure();

  Result<RequestSplits> split = splitRequests(*trace, name);
  if (!split) return cli.usageError(split.error().message());
  const std::vector<RequestSplit>& requests = split->requests;
  const size_t shown = limit == 0 ? requests.size() : std::min(limit, requests.size());

  return writeReport(cli, [&](std::ostream& out) {
    if (cli.options().json) {
      nlohmann::json rows = nlohmann::json::array();
      for (size_t i = 0; i < shown; ++i) {
        const RequestSplit& r = requests[i];
        rows.push_back({{"value", contextValueJson(split->values, r.value)},
                        {"first_ns", trace->sinceStart(r.start)},
                        {"last_ns", trace->sinceStart(r.end)},
                        {"wall_ns", r.wall_ns},
                        {"on_cpu_ns", r.on_cpu_ns},
                        {"runnable_ns", r.runnable_ns},
                        {"lock_wait_ns", r.lock_wait_ns},
                        {"lock_releaser_tid", r.lock_releaser_tid},
                        {"blocked_ns", r.blocked_ns},
                        {"unobserved_ns", r.unobserved_ns},
                        {"page_faults", r.page_faults},
                        {"threads", r.threads},
                        {"short_blocks_summarized", r.short_blocks_summarized}});
      }
      writeJson(out, {{"header", reportHeaderJson("requests", *trace)},
                      {"context", split->name},
                      {"requests_total", requests.size()},
                      {"requests", rows}});
      return;
    }
    printReportHeader(out, "requests", *trace);
    out << requests.size() << " values of " << terminalText(split->name) << " (0 left out)\n\n";
    Table table({{split->name, Align::kRight},
                 {"WALL", Align::kRight},
                 {"ON-CPU", Align::kRight},
                 {"RUNNABLE", Align::kRight},
                 {"LOCK WAIT", Align::kRight},
                 {"BLOCKED", Align::kRight},
                 {"UNSEEN", Align::kRight},
                 {"FAULTS", Align::kRight},
                 {"THREADS", Align::kLeft, 40}});
    bool summarized = false;
    for (size_t i = 0; i < shown; ++i) {
      const RequestSplit& r = requests[i];
      summarized |= r.short_blocks_summarized;
      table.addRow({split->values.text(r.value), formatDurationNs(r.wall_ns),
                    formatDurationNs(r.on_cpu_ns), formatDurationNs(r.runnable_ns),
                    formatDurationNs(r.lock_wait_ns), formatDurationNs(r.blocked_ns),
                    formatDurationNs(r.unobserved_ns), formatCount(r.page_faults),
                    threadList(r.threads)});
    }
    table.render(out);
    if (shown < requests.size())
      out << "(" << requests.size() - shown << " more; --limit 0 shows all)\n";
    if (summarized)
      out << "note: some requests had short blocks counted, not written (--sched-min-block): "
             "their on-CPU includes them\n";
  });
}

}  // namespace incise::analyzer
