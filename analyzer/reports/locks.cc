// `incise locks`: per lock (or per acquire site) acquisitions, contention,
// wait and hold distributions, top waiters and holders, and a hold-time
// histogram; then semaphores, with their posters. Only lock kinds (mutex,
// rwlock, spin, custom probes) are locks; other waits (condvar, join, park,
// unknown futex) are counted in one line and listed by `incise waits`.
//
// Memory: rows stream in time order (readLockStats: WaitClassifier and
// LockRowStream into LockStatsBuilder); what is kept is per group (lock or
// site): two DurationDistributions of at most 32 KiB each, the threads,
// sites and locks seen; plus, in contended mode only, the futex waits in
// progress and per lock the acquisitions its next wake may end
// (critical_sections.h), not a record per wait.
#include <iostream>
#include <nlohmann/json.hpp>

#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/lock_sites.h"
#include "analyzer/analyses/locks/lock_stats.h"
#include "analyzer/analyses/locks/trace_lock_stats.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"
#include "analyzer/reports/lock_report_command.h"
#include "analyzer/reports/lock_report_text.h"
#include "analyzer/reports/log2_histogram_chart.h"
#include "analyzer/reports/wait_report_text.h"

namespace incise::analyzer {
namespace {

constexpr size_t kTopThreads = 3;
constexpr uint64_t kLatest = UINT64_MAX;  // name threads by their last known name

struct LocksOptions {
  std::string by = "lock";
  size_t limit = 10;
};

nlohmann::json threadsJson(const std::vector<ThreadTime>& threads, const LockNames& names) {
  nlohmann::json list = nlohmann::json::array();
  for (const ThreadTime& t : threads) {
    nlohmann::json entry = names.threadJson(t.pid, t.tid, kLatest);
    entry["count"] = t.count;
    entry["ns"] = t.ns;
    list.push_back(entry);
  }
  return list;
}

std::string threadsText(const std::vector<ThreadTime>& threads, const LockNames& names,
                        std::pair<const char*, const char*> what) {
  std::string text;
  for (const ThreadTime& t : threads) {
    if (!text.empty()) text += "; ";
    text += names.thread(t.tid, kLatest) + " " + formatDurationNs(t.ns) + " in " +
            formatCount(t.count) + " " + (t.count == 1 ? what.first : what.second);
  }
  return text.empty() ? "none" : text;
}

// The kind a group shows: a probed call's own (rwlock-read), else its wait kind.
std::string kindText(const LockGroupStats& g) {
  if (g.kind != 0 && g.kind != static_cast<uint64_t>(format::LockKind::kFutex))
    return std::string(format::lockKindName(g.kind));
  return std::string(waitKindName(g.wait_kind));
}

void printDistributions(const std::vector<LockGroupStats>& groups, const LockNames& names,
                        LockGrouping by, bool contended_only, std::ostream& out) {
  Table table({{by == LockGrouping::kByLock ? "LOCK" : "SITE", Align::kLeft, 48},
               {"KIND", Align::kLeft},
               {"ACQUIRED", Align::kRight},
               {"CONT%", Align::kRight},
               {"WAIT TOTAL", Align::kRight},
               {"P50", Align::kRight},
               {"P99", Align::kRight},
               {"MAX", Align::kRight},
               {"HOLD TOTAL", Align::kRight},
               {"P50", Align::kRight},
               {"P90", Align::kRight},
               {"P99", Align::kRight},
               {"MAX", Align::kRight}});
  for (const LockGroupStats& g : groups) {
    table.addRow(
        {by == LockGrouping::kByLock ? names.lock(g.lock, g.site) : names.sites().context(g.site),
         kindText(g), formatCount(g.acquisitions),
         contended_only ? "-" : formatPercent(percentOf(g.contended, g.acquisitions)),
         formatDurationNs(g.wait.total), formatDurationNs(g.wait.p50), formatDurationNs(g.wait.p99),
         formatDurationNs(g.wait.max),
         formatDurationNs(g.hold.total) + (g.hold_inferred ? "*" : "") +
             (g.go_holds.holds() != g.go_holds.acquired ? "+" : ""),
         formatDurationNs(g.hold.p50), formatDurationNs(g.hold.p90), formatDurationNs(g.hold.p99),
         formatDurationNs(g.hold.max)});
  }
  table.render(out);
}

// Where a Go mutex's holds while others waited start, and its holder goroutine.
std::string goHoldsText(const LockGroupStats& g) {
  const GoHoldCounts& h = g.go_holds;
  std::string text = "held while goroutines waited: " + formatCount(h.holds()) + " holds, " +
                     formatCount(h.acquired) + " from a contended Lock";
  if (h.after_previous > 0)
    text += ", " + formatCount(h.after_previous) + " from the previous release (taken unseen)";
  if (h.episode_start > 0)
    text += ", " + formatCount(h.episode_start) + " from the first waiter's arrival";
  if (g.holder_goid != 0) text += "; longest by goroutine " + std::to_string(g.holder_goid);
  return text;
}

void printDetails(const std::vector<LockGroupStats>& groups, const LockNames& names,
                  LockGrouping by, std::ostream& out) {
  for (const LockGroupStats& g : groups) {
    out << "\n";
    if (by == LockGrouping::kByLock) {
      out << "lock " << names.lock(g.lock, g.site) << ", pid " << g.lock.pid << ", acquired at "
          << terminalText(names.sites().context(g.site)) << "\n";
    } else {
      out << "site " << terminalText(names.sites().context(g.site)) << ": " << g.locks
          << (g.locks == 1 ? " lock" : " locks") << ", mostly " << hexAddress(g.lock.address)
          << "\n";
    }
    out << "  top waiters: " << threadsText(g.top_waiters, names, {"wait", "waits"}) << "\n";
    out << "  top holders: " << threadsText(g.top_holders, names, {"hold", "holds"})
        << (g.hold_inferred ? " (inferred)" : "") << "\n";
    if (g.go_holds.holds() > 0) out << "  " << goHoldsText(g) << "\n";
    std::vector<std::string> blamed = names.namedText(g.blamed, {"wait", "waits"});
    for (size_t i = 0; i < blamed.size(); ++i)
      out << (i == 0 ? "  held while others waited: " : "                             ")
          << blamed[i] << "\n";
    if (std::string states = holderStatesText(g.holder_states); !states.empty())
      out << "  holder when a wait began: " << states << "\n";
    renderLog2Histogram(g.hold_histogram, out, "  ");
  }
}

nlohmann::json groupsJson(const std::vector<LockGroupStats>& groups, const LockNames& names,
                          bool contended_only) {
  nlohmann::json list = nlohmann::json::array();
  for (const LockGroupStats& g : groups) {
    list.push_back({
        {"lock", {{"pid", g.lock.pid}, {"address", hexAddress(g.lock.address)}}},
        {"address", hexAddress(g.lock.address)},
        {"pid", g.lock.pid},
        {"name", names.lock(g.lock, g.site)},
        {"site", names.sites().name(g.site)},
        {"site_context", names.sites().context(g.site)},
        {"locks", g.locks},
        {"kind", kindText(g) == "rwlock-read" || kindText(g) == "rwlock-write"
                     ? std::string("rwlock")
                     : kindText(g)},
        {"lock_kind", kindText(g)},
        {"hold_source", std::string(holdSourceName(g.hold_source))},
        {"holder_tid", g.holder_tid},
        {"holder_goid", g.holder_goid},
        {"go_holds", goHoldsJson(g.go_holds)},
        {"held_while_others_waited", names.namedJson(g.blamed)},
        {"holder_states", holderStatesJson(g.holder_states)},
        {"acquisitions", g.acquisitions},
        {"contended", g.contended},
        {"contended_percent",
         contended_only ? nlohmann::json(nullptr)
                        : nlohmann::json(roundedPercent(percentOf(g.contended, g.acquisitions)))},
        {"wait_ns", distributionJson(g.wait)},
        {"hold_ns", distributionJson(g.hold)},
        {"hold_inferred", g.hold_inferred},
        {"top_waiters", threadsJson(g.top_waiters, names)},
        {"top_holders", threadsJson(g.top_holders, names)},
        {"hold_histogram", log2HistogramJson(g.hold_histogram)},
    });
  }
  return list;
}

int reportLocks(Trace& trace, const ReportOutput& output, const LocksOptions& options) {
  LockGrouping by = options.by == "site" ? LockGrouping::kBySite : LockGrouping::kByLock;
  LockSites sites(trace.symbolizer(), trace.stacks());
  TraceLockStats stats = readLockStats(trace, by, sites, kTopThreads);
  const LockRowCounts& counts = stats.counts;
  std::vector<LockGroupStats>& groups = stats.groups;
  size_t total_groups = groups.size();
  if (options.limit != 0 && groups.size() > options.limit) groups.resize(options.limit);
  LockNames names(trace, sites);
  bool contended_only = counts.mode == LockRecordingMode::kContended;

  if (output.json) {
    nlohmann::json doc = {
        {"header", output.headerJson()},
        {"lock_mode", lockModeName(counts.mode)},
        {"recorded_lock_mode", trace.header().options.lock_mode},
        {"by", options.by},
        {"groups_total", total_groups},
        {"try_failed", counts.try_failed},
        {"unreleased", counts.unreleased},
        {"malformed_rows", counts.malformed},
        {"inferred_sections", counts.inferred_sections},
        {"go_unplaced_releases", counts.go_holds.unplaced_releases},
        {"groups", groupsJson(groups, names, contended_only)},
        {"semaphores", waitGroupsJson(stats.semaphores, names)},
        {"other_waits", waitKindsJson(stats.other_waits)},
    };
    writeJson(output.out(), doc);
    return 0;
  }
  std::ostream& out = output.out();
  output.printHeader();
  if (counts.mode == LockRecordingMode::kNone &&
      (!stats.semaphores.empty() || !stats.other_waits.empty())) {
    out << noLockWaitsSentence() << "\n";
  } else {
    out << lockModeSentence(counts.mode) << "\n";
    if (std::string go = goHoldsSentence(counts.go_holds); !go.empty()) out << go << "\n";
  }
  if (!groups.empty()) {
    out << "\n";
    printDistributions(groups, names, by, contended_only, out);
    if (total_groups > groups.size()) {
      out << "(" << total_groups - groups.size() << " more; --limit 0 shows all)\n";
    }
    if (counts.inferred_sections > 0) out << "* hold times inferred from wakes\n";
    if (counts.go_holds.holds() > counts.go_holds.acquired)
      out << "+ Go holds while others waited; one whose Lock was not seen counts from the first "
             "waiter's arrival or the previous release\n";
    printDetails(groups, names, by, out);
  }
  std::vector<WaitGroupStats>& semaphores = stats.semaphores;
  size_t total_semaphores = semaphores.size();
  if (options.limit != 0 && semaphores.size() > options.limit) semaphores.resize(options.limit);
  if (!semaphores.empty()) {
    out << "\nsemaphores: a wait ends when another thread or process posts; the poster is its "
           "cause, not a holder.\n";
    printWaitGroups(semaphores, names, WaitGrouping::kByObject, out);
    if (total_semaphores > semaphores.size())
      out << "(" << total_semaphores - semaphores.size() << " more; --limit 0 shows all)\n";
  }
  if (!stats.other_waits.empty()) out << "\n" << otherWaitsSentence(stats.other_waits) << "\n";
  return 0;
}

}  // namespace

int runLocks(const std::vector<std::string>& args) {
  LocksOptions options;
  ReportCommand command(
      "locks",
      "Per lock (or acquire site): acquisitions, contention, wait and hold times, the holders\n"
      "others waited for (exact when read from the lock); then semaphores and their posters.\n"
      "Locks are mutexes, rwlocks, spin locks and --lock-probe functions; incise waits lists\n"
      "every kind of wait (condition variables, joins, runtime parking, unknown futexes).\n"
      "--where keeps the lock calls of threads holding the values. There is no --by\n"
      "context:NAME: a lock's holds and waits belong to threads serving many values, so its\n"
      "statistics do not split per value; incise waits --by context:NAME gives each value's\n"
      "wait time per kind, incise requests each value's lock wait.",
      "  incise locks app.trace                  # locks by total wait\n"
      "  incise locks app.trace --by site        # by the code that takes them\n"
      "  incise locks app.trace --json --limit 0 # every lock, as JSON\n"
      "  incise locks app.trace --where req=42   # one request's lock calls (--context)\n");
  command.options().add_options()                                                  //
      ("by", boost::program_options::value(&options.by)->default_value("lock"),    //
       "group by 'lock' (address) or 'site' (acquiring function)")                 //
      ("limit", boost::program_options::value(&options.limit)->default_value(10),  //
       "locks to show (0 = all)");
  return command.run(
      args,
      [&](Trace& trace, const ReportOutput& output) { return reportLocks(trace, output, options); },
      [&]() -> std::string {
        if (options.by == "lock" || options.by == "site") return "";
        return "--by '" + options.by + "': expected lock or site";
      });
}

}  // namespace incise::analyzer
