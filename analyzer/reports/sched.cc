// incise sched: per thread, where the time went — running, waiting in a
// runqueue, blocked — plus switches (voluntary/involuntary) and migrations.
#include <algorithm>

#include "analyzer/cli/command_line.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/report_header.h"
#include "analyzer/reports/report_output.h"
#include "analyzer/reports/thread_states.h"

namespace incise::analyzer {
namespace po = boost::program_options;

int runSched(const std::vector<std::string>& args) {
  CommandLine cli(
      "sched",
      "Per thread: time running, runnable-waiting (in a runqueue) and blocked; switches\n"
      "(voluntary = blocked, involuntary = preempted); migrations between cpus.\n"
      "Time before a thread's first scheduler event is not counted.",
      "  incise sched app.trace\n"
      "  incise sched app.trace --comm worker --time 2..4\n"
      "  incise sched app.trace --json\n");
  cli.extra().add_options()("limit", po::value<size_t>()->default_value(50),
                            "threads to print, most running first (0: all)");
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  size_t limit = cli.values()["limit"].as<size_t>();
  std::unique_ptr<Trace> trace = cli.openTrace();
  if (!trace) return 1;

  ThreadStateMachine machine;
  replaySchedule(*trace, Replay::kSwitchesAndWakeups, machine);
  machine.finish(std::min(trace->window().end, trace->endTime()));

  std::vector<std::pair<uint32_t, ThreadSchedStats>> threads;
  for (const auto& [tid, stats] : machine.threads()) {
    if (trace->passesThread(stats.pid, tid, stats.first_time)) threads.emplace_back(tid, stats);
  }
  std::sort(threads.begin(), threads.end(), [](const auto& a, const auto& b) {
    if (a.second.running_ns != b.second.running_ns)
      return a.second.running_ns > b.second.running_ns;
    return a.first < b.first;
  });
  size_t shown = limit == 0 ? threads.size() : std::min(limit, threads.size());

  return writeReport(cli, [&](std::ostream& out) {
    if (cli.options().json) {
      nlohmann::json rows = nlohmann::json::array();
      for (size_t i = 0; i < shown; ++i) {
        const auto& [tid, s] = threads[i];
        rows.push_back({{"tid", tid},
                        {"pid", s.pid},
                        {"comm", trace->threadName(tid, s.first_time)},
                        {"running_ns", s.running_ns},
                        {"runnable_ns", s.runnable_ns},
                        {"blocked_ns", s.blocked_ns},
                        {"voluntary_switches", s.voluntary_switches},
                        {"involuntary_switches", s.involuntary_switches},
                        {"migrations", s.migrations},
                        {"wakeups", s.wakeups}});
      }
      writeJson(out, {{"header", reportHeaderJson("sched", *trace)}, {"threads", rows}});
      return;
    }
    printReportHeader(out, "sched", *trace);
    Table table({{"TID", Align::kRight},
                 {"PID", Align::kRight},
                 {"COMM", Align::kLeft, 24},
                 {"RUNNING", Align::kRight},
                 {"RUNNABLE", Align::kRight},
                 {"BLOCKED", Align::kRight},
                 {"VOL", Align::kRight},
                 {"INVOL", Align::kRight},
                 {"MIGR", Align::kRight},
                 {"WAKEUPS", Align::kRight}});
    for (size_t i = 0; i < shown; ++i) {
      const auto& [tid, s] = threads[i];
      table.addRow({std::to_string(tid), std::to_string(s.pid),
                    trace->threadName(tid, s.first_time), formatDurationNs(s.running_ns),
                    formatDurationNs(s.runnable_ns), formatDurationNs(s.blocked_ns),
                    formatCount(s.voluntary_switches), formatCount(s.involuntary_switches),
                    formatCount(s.migrations), formatCount(s.wakeups)});
    }
    table.render(out);
    if (shown < threads.size())
      out << "(" << threads.size() - shown << " more threads; --limit 0 shows all)\n";
  });
}

}  // namespace incise::analyzer
