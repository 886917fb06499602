// incise offcpu: where threads waited off the CPU — time per off-CPU stack
// and reason (preempted: switched out still runnable; blocked: switched out
// asleep) — and how long they then queued before running again. `--by
// goroutine`: off-CPU time per Go goroutine instead (the goroutine a
// switch-out left, format 2.5); `--by context:NAME`: per value of a context.
#include <algorithm>
#include <map>
#include <tuple>

#include "analyzer/analyses/context/trace_context_timelines.h"
#include "analyzer/analyses/profile/sample_groups.h"
#include "analyzer/analyses/profile/stack_weights.h"
#include "analyzer/analyses/sched/thread_states.h"
#include "analyzer/analyses/summaries/trace_summaries.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/model/stack_namer.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/group_columns.h"
#include "analyzer/reports/report_header.h"
#include "analyzer/reports/schedule_notes.h"
#include "analyzer/reports/stack_text.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

struct ReasonStack {
  std::string reason;
  const WeightedStack* stack;  // weight = ns off CPU, events = switch-outs
};

struct GroupOffCpu {
  uint64_t blocked_ns = 0;
  uint64_t preempted_ns = 0;
  uint64_t switches = 0;
  // --by context:NAME: runqueue waits (wake-up or preemption -> switch-in),
  // each charged to the value its thread held as it began.
  uint64_t runqueue_waits = 0;
  uint64_t runqueue_ns = 0;
  uint64_t runqueue_max_ns = 0;
  uint64_t total() const { return blocked_ns + preempted_ns; }
  void addRunqueueWaits(uint64_t waits, uint64_t total_ns, uint64_t max_ns) {
    runqueue_waits += waits;
    runqueue_ns += total_ns;
    runqueue_max_ns = std::max(runqueue_max_ns, max_ns);
  }
};

// `--by goroutine`, `--by context:NAME`: a row per group, most off-CPU time first.
void writeByGroup(std::ostream& out, const CommandLine& cli, Trace& trace,
                  const GroupColumns& columns, const std::map<SampleGroupKey, GroupOffCpu>& groups,
                  size_t limit) {
  std::vector<std::pair<SampleGroupKey, GroupOffCpu>> rows(groups.begin(), groups.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tuple(b.second.total(), a.first) < std::tuple(a.second.total(), b.first);
  });
  if (limit != 0 && rows.size() > limit) rows.resize(limit);
  if (cli.options().json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [key, g] : rows) {
      nlohmann::json row = columns.fields(key);
      row["blocked_ns"] = g.blocked_ns;
      row["preempted_ns"] = g.preempted_ns;
      row["switches"] = g.switches;
      if (columns.context) {
        row["runqueue_waits"] = g.runqueue_waits;
        row["runqueue_ns"] = g.runqueue_ns;
        row["runqueue_max_ns"] = g.runqueue_max_ns;
      }
      list.push_back(row);
    }
    writeJson(
        out,
        {{"header", reportHeaderJson("offcpu", trace)}, {"by", columns.by}, {columns.list, list}});
    return;
  }
  printReportHeader(out, "offcpu", trace);
  out << "off-CPU time per " << columns.singular << " (" << columns.legend
      << "; blocks shorter than --sched-min-block: "
      << (columns.context ? "the value at the first of them" : "goroutine 0") << ")\n\n";
  std::vector<Column> headers = columns.headers;
  headers.insert(
      headers.end(),
      {{"BLOCKED", Align::kRight}, {"PREEMPTED", Align::kRight}, {"SWITCHES", Align::kRight}});
  if (columns.context) {
    headers.insert(
        headers.end(),
        {{"RUNQUEUE", Align::kRight}, {"WAITS", Align::kRight}, {"MAX WAIT", Align::kRight}});
  }
  Table table(std::move(headers));
  for (const auto& [key, g] : rows) {
    std::vector<std::string> cells = columns.cells(key);
    cells.insert(cells.end(), {formatDurationNs(g.blocked_ns), formatDurationNs(g.preempted_ns),
                               formatCount(g.switches)});
    if (columns.context) {
      cells.insert(cells.end(), {formatDurationNs(g.runqueue_ns), formatCount(g.runqueue_waits),
                                 formatDurationNs(g.runqueue_max_ns)});
    }
    table.addRow(std::move(cells));
  }
  table.render(out);
}

}  // namespace

int runOffcpu(const std::vector<std::string>& args) {
  CommandLine cli(
      "offcpu",
      "Off-CPU time per stack and reason, from scheduler switches: each span runs from a\n"
      "thread's switch-out to its next switch-in, charged to the stack taken at switch-out.\n"
      "Reason: preempted (switched out while runnable, prev_state 0) or blocked (asleep).\n"
      "Then runqueue latency per thread: wake-up or preemption -> switch-in.\n"
      "Threads the recorder followed only; a thread that exited counts nothing after its exit.\n"
      "Blocks shorter than the recording's --sched-min-block come from the recorder's counts\n"
      "per thread and stack (SWITCHES counts them too). --where keeps the off-CPU spans of\n"
      "threads holding the values (a thread changes its context only while it runs, so one\n"
      "value holds a whole span), and the runqueue latency table their waits. --by\n"
      "context:NAME adds each value's runqueue waits, charged to the value held as each began.",
      "  incise offcpu app.trace\n"
      "  incise offcpu app.trace --tid 4242 --limit 5\n"
      "  incise offcpu app.trace --json\n"
      "  incise offcpu app.trace --by goroutine   # Go: off-CPU time per goroutine\n"
      "  incise offcpu app.trace --by context:req # off-CPU time per value of --context req=...\n"
      "  incise offcpu app.trace --where req=42   # where one request waited\n");
  cli.extra().add_options()("limit", po::value<size_t>()->default_value(30),
                            "stacks and threads to print (0: all)")(
      "by", po::value<std::string>()->default_value("stack"),
      "group by stack (with the runqueue latency per thread), goroutine (Go programs) or "
      "context:NAME (a context recorded with --context NAME=...: its value at the switch-out)");
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  size_t limit = cli.values()["limit"].as<size_t>();
  const std::string& by = cli.values()["by"].as<std::string>();
  const std::optional<std::string> context = contextGrouping(by);
  if (by != "stack" && by != "goroutine" && !context)
    return cli.usageError("--by '" + by + "': expected stack, goroutine or context:NAME");
  std::unique_ptr<Trace> trace = cli.openTrace();
  if (!trace) return cli.openFailure();
  std::optional<ContextTimeline> timeline;
  if (context) {
    Result<ContextTimeline> read = readContextTimeline(*trace, *context);
    if (!read) return cli.usageError("--by " + by + ": " + read.error().message());
    timeline = read.take();
  }
  // The group of a thread's off-CPU time from `time` on (its goroutine was read at the switch-out).
  auto groupOf = [&](uint64_t pid, uint64_t tid, uint64_t goid, uint64_t time) {
    return timeline ? contextKey(timeline->valueAt(static_cast<uint32_t>(tid), time))
                    : goroutineKey(pid, goid);
  };

  StackWeights blocked, preempted;
  std::map<SampleGroupKey, GroupOffCpu> groups;
  ThreadStateMachine machine(RecordedThreads::of(*trace));
  machine.observeFrom(std::max(trace->window().start, trace->startTime()));
  // --where: the runqueue waits of threads holding the values, each charged
  // to the value held as it began (the thread has not run since it blocked
  // or was preempted); without it, every wait the machine counted.
  const bool where = !trace->whereTimelines().empty();
  std::map<uint32_t, ThreadSchedStats> held_waits;
  auto addHeldWait = [&](uint32_t pid, uint32_t tid, uint64_t start, uint64_t waits,
                         uint64_t total_ns, uint64_t max_ns) {
    if (!trace->passesEvent(pid, tid, start)) return;
    ThreadSchedStats& s = held_waits[tid];
    if (s.runqueue_waits == 0) s.first_time = start;
    s.pid = pid;
    s.addRunqueueWaits(waits, total_ns, max_ns);
  };
  // --by context:NAME: each value's runqueue waits, as --where holds them.
  auto addValueWait = [&](uint32_t pid, uint32_t tid, uint64_t start, uint64_t waits,
                          uint64_t total_ns, uint64_t max_ns) {
    if (!timeline || !trace->passesEvent(pid, tid, start)) return;
    groups[groupOf(pid, tid, 0, start)].addRunqueueWaits(waits, total_ns, max_ns);
  };
  if (where || timeline) {
    machine.on_runnable = [&](const RunnableSpan& span) {
      if (where) addHeldWait(span.pid, span.tid, span.start, 1, span.duration(), span.duration());
      addValueWait(span.pid, span.tid, span.start, 1, span.duration(), span.duration());
    };
  }
  machine.on_off_cpu = [&](const OffCpuSpan& span) {
    // A thread changes its context only while it runs: one value holds the whole span.
    if (!trace->passesEvent(span.pid, span.tid, span.start)) return;
    (span.preempted ? preempted : blocked)
        .add(span.pid, span.stack_id, span.start, span.duration());
    GroupOffCpu& g = groups[groupOf(span.pid, span.tid, span.goid, span.start)];
    (span.preempted ? g.preempted_ns : g.blocked_ns) += span.duration();
    ++g.switches;
  };
  replaySchedule(*trace, Replay::kSwitchesAndWakeups, machine);
  machine.finish(std::min(trace->window().end, trace->endTime()));
  // Blocks shorter than --sched-min-block: counted by the recorder per stack.
  // What sched charges them, so offcpu still adds up to sched's runnable + blocked.
  forEachBlockSummary(*trace, [&](const format::BlockSummary& s) {
    uint64_t charged = machine.addBlockSummary(s);
    (s.prev_state == 0 ? preempted : blocked)
        .add(static_cast<uint32_t>(s.pid), s.stack_id, s.time, charged, charged ? s.count : 0);
    // Short preemptions were runqueue waits (ThreadStateMachine::addBlockSummary).
    if (s.prev_state == 0 && charged != 0) {
      const auto pid = static_cast<uint32_t>(s.pid), tid = static_cast<uint32_t>(s.tid);
      if (where) addHeldWait(pid, tid, s.time, s.count, charged, s.max_ns);
      addValueWait(pid, tid, s.time, s.count, charged, s.max_ns);
    }
    // Counted per stack by the recorder, without a goroutine.
    if (charged == 0) return;
    GroupOffCpu& g = groups[groupOf(s.pid, s.tid, 0, s.time)];
    (s.prev_state == 0 ? g.preempted_ns : g.blocked_ns) += charged;
    g.switches += s.count;
  });
  if (by != "stack") {
    const GroupColumns columns =
        context ? contextColumns(*context, timeline->text()) : goroutineColumns();
    return writeReport(
        cli, [&](std::ostream& out) { writeByGroup(out, cli, *trace, columns, groups, limit); });
  }

  StackNamer namer(*trace, FrameGrouping::kFunction);
  NamedStacks blocked_stacks = blocked.named(namer), preempted_stacks = preempted.named(namer);
  const NameTable& names = namer.names();
  std::vector<ReasonStack> stacks;
  for (const auto& [reason, named] :
       {std::pair{"blocked", &blocked_stacks}, {"preempted", &preempted_stacks}}) {
    for (const WeightedStack& stack : *named) stacks.push_back({reason, &stack});
  }
  std::sort(stacks.begin(), stacks.end(), [&](const auto& a, const auto& b) {
    if (a.stack->weight != b.stack->weight) return a.stack->weight > b.stack->weight;
    if (a.reason != b.reason) return a.reason < b.reason;
    return names.namesLess(a.stack->root_first, b.stack->root_first);
  });
  uint64_t total_off = blocked.total() + preempted.total();

  std::vector<std::pair<uint32_t, ThreadSchedStats>> threads;
  for (const auto& [tid, stats] : where ? held_waits : machine.threads()) {
    if (stats.runqueue_waits != 0 && trace->passesThread(stats.pid, tid, stats.first_time)) {
      threads.emplace_back(tid, stats);
    }
  }
  std::sort(threads.begin(), threads.end(), [](const auto& a, const auto& b) {
    if (a.second.runqueue_total_ns != b.second.runqueue_total_ns) {
      return a.second.runqueue_total_ns > b.second.runqueue_total_ns;
    }
    return a.first < b.first;
  });
  auto cap = [&](size_t n) { return limit == 0 ? n : std::min(limit, n); };
  ScheduleNotes notes(*trace, machine.consistency(), /*bystanders_shown=*/false);

  return writeReport(cli, [&](std::ostream& out) {
    if (cli.options().json) {
      nlohmann::json stack_rows = nlohmann::json::array(), thread_rows = nlohmann::json::array();
      for (size_t i = 0; i < cap(stacks.size()); ++i) {
        stack_rows.push_back(
            {{"reason", stacks[i].reason},
             {"off_cpu_ns", stacks[i].stack->weight},
             {"switches", stacks[i].stack->events},
             {"percent", roundedPercent(percentOf(stacks[i].stack->weight, total_off))},
             {"frames", names.names(stacks[i].stack->root_first)}});
      }
      for (size_t i = 0; i < cap(threads.size()); ++i) {
        const auto& [tid, s] = threads[i];
        thread_rows.push_back({{"tid", tid},
                               {"pid", s.pid},
                               {"comm", trace->threadName(tid, s.first_time)},
                               {"waits", s.runqueue_waits},
                               {"total_ns", s.runqueue_total_ns},
                               {"avg_ns", s.runqueue_total_ns / s.runqueue_waits},
                               {"max_ns", s.runqueue_max_ns}});
      }
      writeJson(out,
                {{"header", reportHeaderJson("offcpu", *trace)},
                 {"off_cpu_ns", {{"blocked", blocked.total()}, {"preempted", preempted.total()}}},
                 {"schedule", notes.json()},
                 {"stacks", stack_rows},
                 {"runqueue_latency", thread_rows}});
      return;
    }
    printReportHeader(out, "offcpu", *trace);
    out << "off-CPU: " << formatDurationNs(blocked.total()) << " blocked, "
        << formatDurationNs(preempted.total()) << " preempted\n";
    for (const auto& note : notes.lines()) out << "note: " << note << "\n";
    out << "\n";
    Table by_stack({{"OFF-CPU", Align::kRight},
                    {"%", Align::kRight},
                    {"SWITCHES", Align::kRight},
                    {"REASON"},
                    {"STACK (leaf first)", Align::kLeft, 140}});
    for (size_t i = 0; i < cap(stacks.size()); ++i) {
      const auto& s = stacks[i];
      by_stack.addRow(
          {formatDurationNs(s.stack->weight), formatPercent(percentOf(s.stack->weight, total_off)),
           formatCount(s.stack->events), s.reason, stackLine(s.stack->root_first, names)});
    }
    by_stack.render(out);
    out << "\nrunqueue latency (wake-up or preemption -> switch-in)\n";
    Table by_thread({{"TID", Align::kRight},
                     {"PID", Align::kRight},
                     {"COMM", Align::kLeft, 24},
                     {"WAITS", Align::kRight},
                     {"TOTAL", Align::kRight},
                     {"AVG", Align::kRight},
                     {"MAX", Align::kRight}});
    for (size_t i = 0; i < cap(threads.size()); ++i) {
      const auto& [tid, s] = threads[i];
      by_thread.addRow({std::to_string(tid), std::to_string(s.pid),
                        trace->threadName(tid, s.first_time), formatCount(s.runqueue_waits),
                        formatDurationNs(s.runqueue_total_ns),
                        formatDurationNs(s.runqueue_total_ns / s.runqueue_waits),
                        formatDurationNs(s.runqueue_max_ns)});
    }
    by_thread.render(out);
  });
}

}  // namespace incise::analyzer
