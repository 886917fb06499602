// incise sched: per thread, where the time went — running, waiting in a
// runqueue, blocked — plus switches (voluntary/involuntary) and migrations;
// with --where, only while the thread held the values; with --by
// context:NAME, per value of a context instead of per thread.
#include <algorithm>
#include <set>

#include "analyzer/analyses/context/trace_context_timelines.h"
#include "analyzer/analyses/sched/context_sched_stats.h"
#include "analyzer/analyses/sched/thread_states.h"
#include "analyzer/analyses/summaries/trace_summaries.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/group_columns.h"
#include "analyzer/reports/report_header.h"
#include "analyzer/reports/schedule_notes.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

// The figures of sched's rows, as JSON fields and table cells.
void addStatsJson(nlohmann::json& row, const ThreadSchedStats& s) {
  row["running_ns"] = s.running_ns;
  row["runnable_ns"] = s.runnable_ns;
  row["blocked_ns"] = s.blocked_ns;
  row["voluntary_switches"] = s.voluntary_switches;
  row["involuntary_switches"] = s.involuntary_switches;
  row["migrations"] = s.migrations;
  row["wakeups"] = s.wakeups;
}

void addStatsCells(std::vector<std::string>& cells, const ThreadSchedStats& s) {
  cells.insert(cells.end(), {formatDurationNs(s.running_ns), formatDurationNs(s.runnable_ns),
                             formatDurationNs(s.blocked_ns), formatCount(s.voluntary_switches),
                             formatCount(s.involuntary_switches), formatCount(s.migrations),
                             formatCount(s.wakeups)});
}

const std::vector<Column> kStatsHeaders = {{"RUNNING", Align::kRight}, {"RUNNABLE", Align::kRight},
                                           {"BLOCKED", Align::kRight}, {"VOL", Align::kRight},
                                           {"INVOL", Align::kRight},   {"MIGR", Align::kRight},
                                           {"WAKEUPS", Align::kRight}};

void addInto(ThreadSchedStats& into, const ThreadSchedStats& s) {
  into.running_ns += s.running_ns;
  into.runnable_ns += s.runnable_ns;
  into.blocked_ns += s.blocked_ns;
  into.voluntary_switches += s.voluntary_switches;
  into.involuntary_switches += s.involuntary_switches;
  into.migrations += s.migrations;
  into.wakeups += s.wakeups;
}

struct ValueRow {
  SampleGroupKey key;
  ThreadSchedStats stats;
  std::set<uint32_t> threads;
};

// `--by context:NAME`: a row per value, most running first.
int reportByValue(const CommandLine& cli, Trace& trace, const GroupColumns& columns,
                  const ContextSchedStats& split, const ScheduleNotes& notes, size_t limit) {
  std::map<SampleGroupKey, ValueRow> by_value;
  for (const auto& [key, stats] : split) {
    if (!trace.passesThread(stats.pid, key.tid, stats.first_time)) continue;
    ValueRow& row = by_value[key.group];
    row.key = key.group;
    addInto(row.stats, stats);
    row.threads.insert(key.tid);
  }
  std::vector<ValueRow> rows;
  for (auto& [key, row] : by_value) rows.push_back(std::move(row));
  std::sort(rows.begin(), rows.end(), [](const ValueRow& a, const ValueRow& b) {
    if (a.stats.running_ns != b.stats.running_ns) return a.stats.running_ns > b.stats.running_ns;
    return a.key < b.key;
  });
  const size_t total = rows.size();
  if (limit != 0 && rows.size() > limit) rows.resize(limit);
  return writeReport(cli, [&](std::ostream& out) {
    if (cli.options().json) {
      nlohmann::json list = nlohmann::json::array();
      for (const ValueRow& value : rows) {
        nlohmann::json row = columns.fields(value.key);
        row["threads"] = value.threads;
        addStatsJson(row, value.stats);
        list.push_back(std::move(row));
      }
      writeJson(out, {{"header", reportHeaderJson("sched", trace)},
                      {"by", columns.by},
                      {"schedule", notes.json()},
                      {columns.list + "_total", total},
                      {columns.list, list}});
      return;
    }
    printReportHeader(out, "sched", trace);
    out << "thread states per " << columns.singular << ", " << columns.count(total) << " ("
        << columns.legend << ")\n";
    for (const auto& note : notes.lines()) out << "note: " << note << "\n";
    out << "\n";
    std::vector<Column> headers = columns.headers;
    headers.push_back({"THREADS", Align::kRight});
    headers.insert(headers.end(), kStatsHeaders.begin(), kStatsHeaders.end());
    Table table(std::move(headers));
    for (const ValueRow& value : rows) {
      std::vector<std::string> cells = columns.cells(value.key);
      cells.push_back(formatCount(value.threads.size()));
      addStatsCells(cells, value.stats);
      table.addRow(std::move(cells));
    }
    table.render(out);
    if (rows.size() < total)
      out << "(" << total - rows.size() << " more values; --limit 0 shows all)\n";
  });
}

}  // namespace

int runSched(const std::vector<std::string>& args) {
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
              "they are charged to their thread's blocked time from those counts.\n"
              "--where and --by context:NAME cut each thread's states where its context changes\n"
              "(switches and wake-ups go to the value held at them; a thread changes its context\n"
              "only while it runs); short blocks go to the value held at the first of them.",
          .examples = "  incise sched app.trace\n"
                      "  incise sched app.trace --comm worker --time 2..4\n"
                      "  incise sched app.trace --bystanders --limit 0\n"
                      "  incise sched app.trace --json\n"
                      "  incise sched app.trace --where req=42     # one request's threads, while "
                      "they served it\n"
                      "  incise sched app.trace --by context:req   # running, runnable, blocked "
                      "per request\n"},
      SharedOptions{});
  // clang-format off
  cli.extra().add_options()
      ("limit", po::value<size_t>()->default_value(50), "threads to print, most running first (0: all)")
      ("bystanders", po::bool_switch(),
       "also show threads seen only beside followed ones: their runs seen start to end on one cpu")
      ("by", po::value<std::string>()->default_value("thread"),
       "group by thread, or context:NAME (a context recorded with --context NAME=...: the time "
       "threads spent in each state while holding each value)");
  // clang-format on
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  size_t limit = cli.values()["limit"].as<size_t>();
  bool bystanders = cli.values()["bystanders"].as<bool>();
  const std::string& by = cli.values()["by"].as<std::string>();
  const std::optional<std::string> context = contextGrouping(by);
  if (by != "thread" && !context)
    return cli.usageError("--by '" + by + "': expected thread or context:NAME");
  std::unique_ptr<Trace> trace = cli.openTrace();
  if (!trace) return cli.openFailure();
  std::optional<ContextTimeline> timeline;
  if (context) {
    Result<ContextTimeline> read = readContextTimeline(*trace, *context);
    if (!read) return cli.usageError("--by " + by + ": " + read.error().message());
    timeline = read.take();
  }

  ThreadStateMachine machine(RecordedThreads::of(*trace), bystanders);
  std::map<uint32_t, ThreadSchedStats> held;  // --where: each thread's time holding the values
  if (timeline || !trace->whereTimelines().empty()) {
    ContextSchedStats split =
        replayScheduleByContext(*trace, machine, timeline ? &*timeline : nullptr);
    if (timeline) {
      ScheduleNotes notes(*trace, machine.consistency(), bystanders);
      return reportByValue(cli, *trace, contextColumns(*context, timeline->text()), split, notes,
                           limit);
    }
    for (const auto& [key, stats] : split) {
      auto [it, added] = held.try_emplace(key.tid, stats);
      if (!added) addInto(it->second, stats);
    }
    for (auto& [tid, stats] : held) stats.exit_time = machine.threads().at(tid).exit_time;
  } else {
    machine.observeFrom(std::max(trace->window().start, trace->startTime()));
    replaySchedule(*trace, Replay::kSwitchesAndWakeups, machine);
    machine.finish(std::min(trace->window().end, trace->endTime()));
    forEachBlockSummary(*trace, [&](const format::BlockSummary& s) { machine.addBlockSummary(s); });
  }
  const std::map<uint32_t, ThreadSchedStats>& counted =
      trace->whereTimelines().empty() ? machine.threads() : held;

  std::vector<std::pair<uint32_t, ThreadSchedStats>> threads;
  uint64_t running_total = 0;
  for (const auto& [tid, stats] : counted) {
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
        nlohmann::json row = {
            {"tid", tid}, {"pid", s.pid}, {"comm", trace->threadName(tid, s.first_time)}};
        addStatsJson(row, s);
        row["bystander"] = s.bystander;
        row["first_ns"] = trace->sinceStart(s.first_time);
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
    std::vector<Column> headers = {
        {"TID", Align::kRight}, {"PID", Align::kRight}, {"COMM", Align::kLeft, 24}};
    headers.insert(headers.end(), kStatsHeaders.begin(), kStatsHeaders.end());
    Table table(std::move(headers));
    for (size_t i = 0; i < shown; ++i) {
      const auto& [tid, s] = threads[i];
      std::string comm = trace->threadName(tid, s.first_time);
      if (s.bystander) comm += " (bystander)";
      std::vector<std::string> cells = {std::to_string(tid), std::to_string(s.pid), comm};
      addStatsCells(cells, s);
      table.addRow(std::move(cells));
    }
    table.render(out);
    if (shown < threads.size())
      out << "(" << threads.size() - shown << " more threads; --limit 0 shows all)\n";
  });
}

}  // namespace incise::analyzer
