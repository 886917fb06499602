#include "analyzer/reports/wait_report_text.h"

#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"
#include "analyzer/reports/group_columns.h"

namespace incise::analyzer {
namespace {

constexpr uint64_t kLatest = UINT64_MAX;

std::string waiterText(const std::vector<ThreadTime>& threads, const LockNames& names) {
  std::string text;
  for (const ThreadTime& t : threads) {
    if (!text.empty()) text += "; ";
    text += names.thread(t.tid, kLatest) + " " + formatDurationNs(t.ns) + " in " +
            formatCount(t.count) + (t.count == 1 ? " wait" : " waits");
  }
  return text.empty() ? "none" : text;
}

// "4: 18 (90 waits, 120.5 ms), 19 (...), ...": the count, then the top ones.
std::string goroutinesText(const std::vector<GoroutineWaits>& top, uint64_t count) {
  std::string text = formatCount(count) + ":";
  for (size_t i = 0; i < top.size(); ++i) {
    text += (i == 0 ? " " : ", ") + std::to_string(top[i].goid) + " (" + formatCount(top[i].waits) +
            (top[i].waits == 1 ? " wait, " : " waits, ") + formatDurationNs(top[i].ns) + ")";
  }
  if (top.size() < count) text += ", ...";
  return text;
}

nlohmann::json goroutinesJson(const std::vector<GoroutineWaits>& top) {
  nlohmann::json list = nlohmann::json::array();
  for (const GoroutineWaits& g : top)
    list.push_back({{"goid", g.goid}, {"waits", g.waits}, {"ns", g.ns}});
  return list;
}

std::string groupName(const WaitGroupStats& g, const LockNames& names, WaitGrouping by,
                      const ContextValueText& values) {
  switch (by) {
    case WaitGrouping::kBySite:
      return names.sites().context(g.site);
    case WaitGrouping::kByThread:
      return names.thread(g.tid, kLatest);
    case WaitGrouping::kByContext:
      return g.value ? values.text(*g.value) : "- (unknown)";
    case WaitGrouping::kByObject:
      break;
  }
  return names.lock({g.pid, g.object}, g.site);
}

}  // namespace

std::string_view namedRole(WaitKind kind) {
  switch (kind) {
    case WaitKind::kMutex:
    case WaitKind::kRwlock:
    case WaitKind::kSpin:
    case WaitKind::kCustom:
      return "held by";
    case WaitKind::kSemaphore:
      return "posted by";
    case WaitKind::kCondvar:
      return "signalled by";
    case WaitKind::kJoin:
      return "joined thread";
    case WaitKind::kPark:
      return "unparked by";
    case WaitKind::kFutex:
      break;
  }
  return "woken by";
}

void printWaitGroups(const std::vector<WaitGroupStats>& groups, const LockNames& names,
                     WaitGrouping by, std::ostream& out, const ContextValueText& values) {
  Table table({{by == WaitGrouping::kByObject    ? "WAITED ON"
                : by == WaitGrouping::kBySite    ? "SITE"
                : by == WaitGrouping::kByContext ? "VALUE"
                                                 : "THREAD",
                Align::kLeft, 44},
               {"KIND", Align::kLeft},
               {"WAITS", Align::kRight},
               {"WAIT TOTAL", Align::kRight},
               {"P50", Align::kRight},
               {"P99", Align::kRight},
               {"MAX", Align::kRight},
               {"CAUSE", Align::kLeft, 48}});
  for (const WaitGroupStats& g : groups) {
    std::string cause = g.holder_tid == 0 ? "-"
                                          : std::string(namedRole(g.kind)) + " " +
                                                names.thread(g.holder_tid, kLatest) + " (" +
                                                std::string(holdSourceName(g.hold_source)) + ")";
    table.addRow({groupName(g, names, by, values), std::string(waitKindName(g.kind)),
                  formatCount(g.wait.count), formatDurationNs(g.wait.total),
                  formatDurationNs(g.wait.p50), formatDurationNs(g.wait.p99),
                  formatDurationNs(g.wait.max), cause});
  }
  table.render(out);
  for (const WaitGroupStats& g : groups) {
    out << "\n"
        << waitKindName(g.kind) << " " << groupName(g, names, by, values) << ", pid " << g.pid;
    if (by != WaitGrouping::kBySite)
      out << ", waited at " << terminalText(names.sites().context(g.site));
    if (g.objects > 1) out << ", " << g.objects << " objects, mostly " << hexAddress(g.object);
    out << "\n  waiters: " << waiterText(g.top_waiters, names) << "\n";
    std::vector<std::string> named = names.namedText(g.top_named, {"wait", "waits"});
    std::string role(namedRole(g.kind));
    for (size_t i = 0; i < named.size(); ++i)
      out << "  " << (i == 0 ? role + ":" : std::string(role.size() + 1, ' ')) << " " << named[i]
          << "\n";
    if (std::string states = holderStatesText(g.holder_states); !states.empty())
      out << "  holder when a wait began: " << states << "\n";
    if (g.goroutines_waiting > 0)
      out << "  goroutines waiting: " << goroutinesText(g.goroutine_waiters, g.goroutines_waiting)
          << "\n";
    if (g.goroutines_releasing > 0)
      out << "  released by goroutines: "
          << goroutinesText(g.goroutine_releasers, g.goroutines_releasing) << "\n";
    if (g.unfinished > 0)
      out << "  " << g.unfinished << (g.unfinished == 1 ? " wait was" : " waits were")
          << " still going when recording stopped (counted up to the end)\n";
  }
}

nlohmann::json waitGroupsJson(const std::vector<WaitGroupStats>& groups, const LockNames& names,
                              const ContextValueText& values) {
  nlohmann::json list = nlohmann::json::array();
  for (const WaitGroupStats& g : groups) {
    nlohmann::json waiters = nlohmann::json::array();
    for (const ThreadTime& t : g.top_waiters) {
      nlohmann::json entry = names.threadJson(t.pid, t.tid, kLatest);
      entry["count"] = t.count;
      entry["ns"] = t.ns;
      waiters.push_back(entry);
    }
    nlohmann::json row = {
        {"address", hexAddress(g.object)},
        {"pid", g.pid},
        {"kind", std::string(waitKindName(g.kind))},
        {"site", names.sites().name(g.site)},
        {"site_context", names.sites().context(g.site)},
        {"objects", g.objects},
        {"thread", g.tid == 0 ? nlohmann::json(nullptr) : names.threadJson(g.pid, g.tid, kLatest)},
        {"hold_source", std::string(holdSourceName(g.hold_source))},
        {"holder_tid", g.holder_tid},
        {"role", std::string(namedRole(g.kind))},
        {"wait_ns", distributionJson(g.wait)},
        {"unfinished", g.unfinished},
        {"top_waiters", waiters},
        {"named", names.namedJson(g.top_named)},
        {"holder_states", holderStatesJson(g.holder_states)},
        {"goroutines_waiting", g.goroutines_waiting},
        {"goroutine_waiters", goroutinesJson(g.goroutine_waiters)},
        {"goroutines_releasing", g.goroutines_releasing},
        {"goroutine_releasers", goroutinesJson(g.goroutine_releasers)},
    };
    if (g.by_context) row["value"] = contextValueJson(values, g.value);
    list.push_back(std::move(row));
  }
  return list;
}

nlohmann::json waitKindsJson(const std::vector<WaitKindTotals>& kinds) {
  nlohmann::json list = nlohmann::json::array();
  for (const WaitKindTotals& k : kinds) {
    list.push_back({{"kind", std::string(waitKindName(k.kind))},
                    {"objects", k.objects},
                    {"wait_ns", distributionJson(k.wait)}});
  }
  return list;
}

std::string waitKindList(const std::vector<WaitKindTotals>& kinds) {
  std::string text;
  for (size_t i = 0; i < kinds.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::string(waitKindName(kinds[i].kind)) + " " +
            formatCount(kinds[i].wait.count) + " (" + formatDurationNs(kinds[i].wait.total) + ")";
  }
  return text;
}

std::string noLockWaitsSentence() {
  return "no waits on locks (mutexes, rwlocks, spin locks, --lock-probe functions) in this "
         "trace; its waits are on other kinds (below).";
}

std::string otherWaitsSentence(const std::vector<WaitKindTotals>& kinds) {
  return "other waits, not on locks: " + waitKindList(kinds) + "; incise waits lists them.";
}

}  // namespace incise::analyzer
