// incise sched: per thread, where the time went — running, waiting in a
// runqueue, blocked — plus switches (voluntary/involuntary) and migrations.
#include <algorithm>

#include "analyzer/analyses/sched/block_summaries.h"
#include "analyzer/analyses/sched/thread_states.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/report_header.h"
#include "analyzer/reports/schedule_notes.h"

namespace incise::analyzer {
namespace po = boost::program_options;

int runSched(const std::vector<std::string>& args) {
  // A thread's states are charged whole (--where is not taken: its replay
  // would have to split each state at the thread's context changes).
  CommandLine cli(
      CommandHelp{
          .name = "sched",
          .summary =
              "Per thread: time running, runnable-waiting (in a runqueue) and blocked; switches\n"
              "(voluntary = blocked, involuntary = preempted); migrations between cpus.\n"
              "Only what was observed counts: a thread's time starts at its first event (a thread\n"
              "already running when the trace starts counts from the start) and ends at its exit.\n"
              "Threads the recorder did not follow, seen only as the other side of a followed\n"
              "thread's switch, are left out; --bystanders shows what was seen of them.\n"
              "Blocks shorter than the recording's --sched-min-block were counted, not written:\n"
              "they are charged to their thread's blocked time from those counts.",
          .examples = "  incise sched app.trace\n"
                      "  incise sched app.trace --comm worker --time 2..4\n"
                      "  incise sched app.trace --bystanders --limit 0\n"
                      "  incise sched app.trace --json\n"},
      SharedOptions{.where = false});
  // clang-format off
  cli.extra().add_options()
      ("limit", po::value<size_t>()->default_value(50), "threads to print, most running first (0: all)")
      ("bystanders", po::bool_switch(),
       "also show threads seen only beside followed ones: their runs seen start to end on one cpu");
  // clang-format on
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  size_t limit = cli.values()["limit"].as<size_t>();
  bool bystanders = cli.values()["bystanders"].as<bool>();
  std::unique_ptr<Trace> trace = cli.openTrace();
  if (!trace) return cli.openFailure();

  ThreadStateMachine machine(RecordedThreads::of(*trace), bystanders);
  machine.observeFrom(std::max(trace->window().start, trace->startTime()));
  replaySchedule(*trace, Replay::kSwitchesAndWakeups, machine);
  machine.finish(std::min(trace->window().end, trace->endTime()));
  forEachBlockSummary(*trace, [&](const format::BlockSummary& s) { machine.addBlockSummary(s); });

  std::vector<std::pair<uint32_t, ThreadSchedStats>> threads;
  uint64_t running_total = 0;
  for (const auto& [tid, stats] : machine.threads()) {
    if (!trace->passesThread(stats.pid, tid, stats.first_time)) continue;
    threads.emplace_back(tid, stats);
    running_total += stats.running_ns;
  }
  std::sort(threads.begin(), threads.end(), [](const auto& a, const auto& b) {
    if (a.second.running_ns != b.second.running_ns)
      return a.second.running_ns > b.second.running_ns;
    return a.first < b.first;
  });
  size_t shown = limit == 0 ? threads.size() : std::min(limit, threads.size());
  ScheduleNotes notes(*trace, machine.consistency(), bystanders);
  uint64_t capacity = trace->durationNs() * trace->header().cpu_count;

  return writeReport(cli, [&](std::ostream& out) {
    if (cli.options().json) {
      nlohmann::json rows = nlohmann::json::array();
      for (size_t i = 0; i < shown; ++i) {
        const auto& [tid, s] = threads[i];
        nlohmann::json row = {{"tid", tid},
                              {"pid", s.pid},
                              {"comm", trace->threadName(tid, s.first_time)},
                              {"running_ns", s.running_ns},
                              {"runnable_ns", s.runnable_ns},
                              {"blocked_ns", s.blocked_ns},
                              {"voluntary_switches", s.voluntary_switches},
                              {"involuntary_switches", s.involuntary_switches},
                              {"migrations", s.migrations},
                              {"wakeups", s.wakeups},
                              {"bystander", s.bystander},
                              {"first_ns", trace->sinceStart(s.first_time)}};
        if (s.exit_time != 0) row["exit_ns"] = trace->sinceStart(s.exit_time);
        rows.push_back(std::move(row));
      }
      writeJson(out, {{"header", reportHeaderJson("sched", *trace)},
                      {"running_total_ns", running_total},
                      {"cpu_capacity_ns", capacity},
                      {"schedule", notes.json()},
                      {"threads", rows}});
      return;
    }
    printReportHeader(out, "sched", *trace);
    out << "running " << formatDurationNs(running_total) << " of " << formatDurationNs(capacity)
        << " cpu time (" << trace->header().cpu_count << " cpus)\n";
    for (const auto& note : notes.lines()) out << "note: " << note << "\n";
    out << "\n";
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
      std::string comm = trace->threadName(tid, s.first_time);
      if (s.bystander) comm += " (bystander)";
      table.addRow({std::to_string(tid), std::to_string(s.pid), comm,
                    formatDurationNs(s.running_ns), formatDurationNs(s.runnable_ns),
                    formatDurationNs(s.blocked_ns), formatCount(s.voluntary_switches),
                    formatCount(s.involuntary_switches), formatCount(s.migrations),
                    formatCount(s.wakeups)});
    }
    table.render(out);
    if (shown < threads.size())
      out << "(" << threads.size() - shown << " more threads; --limit 0 shows all)\n";
  });
}

}  // namespace incise::analyzer
