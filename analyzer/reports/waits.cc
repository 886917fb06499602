// `incise waits`: every wait of a trace by kind (mutex, rwlock, spin,
// custom, condvar, semaphore, join, park, futex), with the wait time per
// kind, then per object (or site, or waiting thread): waits, percentiles,
// waiters, and the thread each group's waits name (holder, poster,
// signaller, joined thread), exact or inferred, with the stack it woke them
// from.
//
// Short condvar and semaphore waits the recorder counted instead of writing
// (wait summary rows, --sched-min-block) count with their rows' groups.
//
// Memory: rows stream in file order into a WaitStatsBuilder (per group a
// DurationDistribution and the threads seen; the kind of each wait is
// decided by WaitClassifier, which names each wait stack once).
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "analyzer/analyses/context/trace_context_timelines.h"
#include "analyzer/analyses/locks/lock_sites.h"
#include "analyzer/analyses/locks/trace_wait_kinds.h"
#include "analyzer/analyses/locks/wait_stats.h"
#include "analyzer/analyses/locks/wait_summary_row.h"
#include "analyzer/analyses/summaries/trace_summaries.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/group_columns.h"
#include "analyzer/reports/lock_report_command.h"
#include "analyzer/reports/lock_report_text.h"
#include "analyzer/reports/wait_report_text.h"

namespace incise::analyzer {
namespace {

constexpr size_t kTopThreads = 3;
// JSON is for tools: a group names many more threads (a semaphore's posters,
// every thread a join waited for), still bounded.
constexpr size_t kJsonTopThreads = 100;

struct WaitsOptions {
  std::string by = "object";
  std::string kinds;  // comma list; empty = every kind
  size_t limit = 10;
};

std::optional<WaitGrouping> groupingOf(const std::string& by) {
  if (by == "object") return WaitGrouping::kByObject;
  if (by == "site") return WaitGrouping::kBySite;
  if (by == "thread") return WaitGrouping::kByThread;
  if (contextGrouping(by)) return WaitGrouping::kByContext;
  return std::nullopt;
}

// The kinds --kind names ("" = all), or a usage problem.
std::string parseKinds(const std::string& list, std::vector<WaitKind>& kinds) {
  kinds.clear();
  if (list.empty()) {
    kinds.assign(kAllWaitKinds.begin(), kAllWaitKinds.end());
    return "";
  }
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    std::optional<WaitKind> kind = waitKindByName(item);
    if (!kind) {
      return "--kind '" + item +
             "': expected mutex, rwlock, spin, custom, condvar, semaphore, join, park or futex";
    }
    kinds.push_back(*kind);
  }
  return "";
}

void printKinds(const std::vector<WaitKindTotals>& kinds, std::ostream& out) {
  Table table({{"KIND", Align::kLeft},
               {"WAITS", Align::kRight},
               {"OBJECTS", Align::kRight},
               {"WAIT TOTAL", Align::kRight},
               {"P50", Align::kRight},
               {"P99", Align::kRight},
               {"MAX", Align::kRight},
               {"BLAMES A HOLDER", Align::kLeft}});
  for (const WaitKindTotals& k : kinds) {
    table.addRow({std::string(waitKindName(k.kind)), formatCount(k.wait.count),
                  formatCount(k.objects), formatDurationNs(k.wait.total),
                  formatDurationNs(k.wait.p50), formatDurationNs(k.wait.p99),
                  formatDurationNs(k.wait.max), blamesHolder(k.kind) ? "yes" : "no"});
  }
  table.render(out);
}

int reportWaits(Trace& trace, const ReportOutput& output, const WaitsOptions& options) {
  WaitGrouping by = *groupingOf(options.by);
  std::optional<ContextTimeline> timeline;
  if (std::optional<std::string> context = contextGrouping(options.by)) {
    Result<ContextTimeline> read = readContextTimeline(trace, *context);
    if (!read) return output.usageError("--by " + options.by + ": " + read.error().message());
    timeline = read.take();
  }
  std::vector<WaitKind> wanted;
  parseKinds(options.kinds, wanted);
  LockSites sites(trace.symbolizer(), trace.stacks());
  WaitStatsBuilder stats(by, [&](uint64_t stack) { return sites.siteOf(stack); });
  WaitClassifier classifier(trace);
  trace.forEachRow<format::LockInterval>([&](const format::LockInterval& row) {
    if (!isWait(row)) return;
    WaitClass wait = classifier.classify(row);
    if (std::find(wanted.begin(), wanted.end(), wait.kind) == wanted.end()) return;
    sites.add(row.pid, row.stack_id, row.time);
    stats.add(
        row, wait,
        timeline ? timeline->valueAt(static_cast<uint32_t>(row.tid), row.time) : std::nullopt);
  });
  forEachWaitSummary(trace, [&](const format::WaitSummary& summary) {
    format::LockInterval shared = waitRowOf(summary);
    WaitClass wait = classifier.classify(shared);
    if (std::find(wanted.begin(), wanted.end(), wait.kind) == wanted.end()) return;
    sites.add(shared.pid, shared.stack_id, shared.time);
    stats.add(summary, wait,
              timeline ? timeline->valueAt(static_cast<uint32_t>(shared.tid), shared.time)
                       : std::nullopt);
  });
  std::vector<WaitKindTotals> kinds = stats.kinds();
  std::vector<WaitGroupStats> groups = stats.finish(output.json ? kJsonTopThreads : kTopThreads);
  size_t total_groups = groups.size();
  if (options.limit != 0 && groups.size() > options.limit) groups.resize(options.limit);
  LockNames names(trace, sites);
  const ContextValueText values = timeline ? timeline->text() : ContextValueText();

  if (output.json) {
    writeJson(output.out(), {
                                {"header", output.headerJson()},
                                {"recorded_lock_mode", trace.header().options.lock_mode},
                                {"by", options.by},
                                {"kinds", waitKindsJson(kinds)},
                                {"groups_total", total_groups},
                                {"groups", waitGroupsJson(groups, names, values)},
                            });
    return 0;
  }
  std::ostream& out = output.out();
  output.printHeader();
  if (kinds.empty()) {
    out << "no waits in this trace (or none pass the filters): record with --locks contended "
           "(the default) or --locks all.\n";
    return 0;
  }
  out << "\n";
  printKinds(kinds, out);
  out << "\n";
  printWaitGroups(groups, names, by, out, values);
  if (total_groups > groups.size())
    out << "\n(" << total_groups - groups.size() << " more; --limit 0 shows all)\n";
  return 0;
}

}  // namespace

int runWaits(const std::vector<std::string>& args) {
  WaitsOptions options;
  ReportCommand command(
      "waits",
      "Every wait by kind: mutex, rwlock, spin, custom (locks: a holder keeps the waiter out),\n"
      "condvar, semaphore, join, park (events another thread makes happen) and futex (a\n"
      "futex whose protocol is not known); then per object, site or thread: waits, wait\n"
      "times, waiters, and who held, posted, signalled or was joined.",
      "  incise waits app.trace                          # wait time per kind, then per object\n"
      "  incise waits app.trace --kind semaphore,condvar # only these kinds\n"
      "  incise waits app.trace --by thread --limit 0    # every waiting thread\n"
      "  incise waits app.trace --json                   # kind, address, site, holder_tid ...\n"
      "  incise waits app.trace --where req=42           # the waits of one request (--context)\n"
      "  incise waits app.trace --by context:req         # wait time per request and kind\n");
  command.options().add_options()                                                  //
      ("by", boost::program_options::value(&options.by)->default_value("object"),  //
       "group by 'object' (the lock, condvar, semaphore...), 'site', 'thread' or "
       "'context:NAME' (per kind and value of --context NAME=... the waiter held)")  //
      ("kind", boost::program_options::value(&options.kinds),                        //
       "only these kinds (comma list): mutex rwlock spin custom condvar semaphore join park "
       "futex")                                                                    //
      ("limit", boost::program_options::value(&options.limit)->default_value(10),  //
       "groups to show (0 = all)");
  return command.run(
      args,
      [&](Trace& trace, const ReportOutput& output) { return reportWaits(trace, output, options); },
      [&]() -> std::string {
        if (!groupingOf(options.by))
          return "--by '" + options.by + "': expected object, site, thread or context:NAME";
        std::vector<WaitKind> kinds;
        return parseKinds(options.kinds, kinds);
      });
}

}  // namespace incise::analyzer
