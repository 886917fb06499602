#include "analyzer/reports/correlate_story.h"

#include <algorithm>
#include <cstdio>

#include "analyzer/analyses/locks/lock_sites.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"
#include "analyzer/reports/wait_report_text.h"

namespace incise::analyzer {
namespace {

constexpr uint64_t kLatest = UINT64_MAX;  // name threads by their last known name
constexpr size_t kTopStacks = 3;
constexpr size_t kSummaryFindings = 10;  // JSON "summary": the headline, whatever --limit
constexpr size_t kStackFrames = 1;       // "most at touch_fresh_pages": the leaf says what

std::string plural(uint64_t n, const char* one, const char* many) {
  return formatCount(n) + " " + (n == 1 ? one : many);
}

std::string percentText(uint64_t part, uint64_t whole) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%.0f%%", percentOf(part, whole));
  return buffer;
}

std::string ordinal(size_t n) {
  const char* suffix = n % 100 >= 11 && n % 100 <= 13 ? "th"
                       : n % 10 == 1                  ? "st"
                       : n % 10 == 2                  ? "nd"
                       : n % 10 == 3                  ? "rd"
                                                      : "th";
  return std::to_string(n) + suffix;
}

const ThreadActivity* threadActivity(const HolderActivity& activity, uint64_t tid) {
  auto it =
      std::lower_bound(activity.threads.begin(), activity.threads.end(), tid,
                       [](const ThreadActivity& t, uint64_t wanted) { return t.tid < wanted; });
  return it != activity.threads.end() && it->tid == tid ? &*it : nullptr;
}

std::vector<std::pair<uint64_t, uint64_t>> topStacks(const StackCounts& stacks) {
  std::vector<std::pair<uint64_t, uint64_t>> list = stacks.byStack();
  std::stable_sort(list.begin(), list.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (list.size() > kTopStacks) list.resize(kTopStacks);
  return list;
}

const char* kindName(FindingKind kind) {
  switch (kind) {
    case FindingKind::kHolderOffCpu:
      return "holder_off_cpu";
    case FindingKind::kHolderOnCpu:
      return "holder_on_cpu";
    case FindingKind::kLongestWait:
      break;
  }
  return "longest_wait";
}

const char* sourceName(WakeSource source) {
  return source == WakeSource::kWakeupEvent ? "wakeup"
         : source == WakeSource::kReleaser  ? "releaser"
                                            : "unknown";
}

}  // namespace

std::string lockNoun(uint64_t kind) {
  switch (static_cast<format::LockKind>(kind)) {
    case format::LockKind::kMutex:
      return "mutex";
    case format::LockKind::kRwlockRead:
    case format::LockKind::kRwlockWrite:
      return "rwlock";
    case format::LockKind::kSpin:
      return "spinlock";
    case format::LockKind::kFutex:
      return "futex";
    case format::LockKind::kCondvar:
      return "condvar";
    case format::LockKind::kCustom:
      break;
  }
  return "lock";
}

CorrelateStory::CorrelateStory(Trace& trace, const Correlation& correlation, const LockSites& sites)
    : trace_(trace),
      correlation_(correlation),
      sites_(sites),
      names_(trace, sites),
      tree_(wakeChainTree(correlation.chains)) {}

// ---- sentences -------------------------------------------------------------------

std::string CorrelateStory::heldText(const HeldLock& h) const {
  std::string text = lockNoun(h.kind) + " " + hexAddress(h.lock.address);
  return h.site == 0 ? text : text + " at " + sites_.name(h.site);  // 0: no acquire stack
}

std::string CorrelateStory::waitText(const LockWait& w) const {
  uint64_t site = sites_.siteOf(w.stack_id);
  std::string text = formatDurationNs(w.duration()) + " for " + lockNoun(w.kind) + " " +
                     hexAddress(w.lock.address);
  return site == 0 ? text : text + " at " + sites_.name(site);
}

std::string CorrelateStory::topStack(const HeldLock& h, const StackCounts& stacks) const {
  std::vector<std::pair<uint64_t, uint64_t>> top = topStacks(stacks);
  if (top.empty()) return "[no stack]";
  return describeStack(trace_.symbolizer(), trace_.stacks(), h.lock.pid, top.front().first, kLatest,
                       kStackFrames);
}

std::string CorrelateStory::offCpuSentence(const HeldLock& h) const {
  uint64_t switches = h.preempted_switches + h.blocked_switches;
  std::string how = h.blocked_switches == 0 ? "preempted " + plural(switches, "time", "times")
                    : h.preempted_switches == 0
                        ? "blocked " + plural(switches, "time", "times")
                        : "switched out " + plural(switches, "time", "times") + " (" +
                              formatCount(h.preempted_switches) + " preempted, " +
                              formatCount(h.blocked_switches) + " blocked)";
  std::string text = names_.thread(h.tid, kLatest) + " was " + how + " while holding " +
                     heldText(h) + ": " + formatDurationNs(h.off_cpu_ns()) + " off-CPU";
  if (h.waiters_while_off_cpu > 0) {
    text += ", while " + plural(h.waiters_while_off_cpu, "waiter", "waiters") + " lost " +
            formatDurationNs(h.waiter_ns_while_off_cpu);
    if (correlation_.thread_filter && h.focus_waiter_ns_while_off_cpu != h.waiter_ns_while_off_cpu)
      text +=
          " (" + formatDurationNs(h.focus_waiter_ns_while_off_cpu) + " of it the threads shown)";
  } else {
    text += "; no one waited for it meanwhile";
  }
  return text + (h.inferred ? " (holds inferred from wakes)." : ".");
}

std::string CorrelateStory::onCpuSentence(const HeldLock& h, uint64_t waited_ns) const {
  const ThreadActivity* t = threadActivity(correlation_.activity, h.tid);
  std::string text = names_.thread(h.tid, kLatest) + " held " + heldText(h);
  text +=
      waited_ns > 0 ? " on-CPU while others waited " + formatDurationNs(waited_ns) + ": " : ": ";
  std::vector<std::string> parts;
  if (h.samples > 0) {
    uint64_t all = t ? t->samples : h.samples;
    parts.push_back(percentText(h.samples, all) + " of its CPU samples (" + formatCount(h.samples) +
                    " of " + formatCount(all) + ") came inside, most at " +
                    topStack(h, h.sample_stacks));
  }
  if (h.faults > 0) {
    uint64_t all = t ? t->faults : h.faults;
    parts.push_back(percentText(h.faults, all) + " of its page faults (" + formatCount(h.faults) +
                    " of " + formatCount(all) + ")" + (h.samples > 0 ? "" : " came inside") +
                    ", most at " + topStack(h, h.fault_stacks));
  }
  for (size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? "" : ", and ") + parts[i];
  return text + (h.inferred ? " (holds inferred from wakes)." : ".");
}

std::string CorrelateStory::longestWaitSentence(const WakeChain& chain) const {
  const WakeLink& first = chain.links.front();
  std::string text = "The longest lock wait: " + names_.thread(first.wait.tid, kLatest) +
                     " waited " + waitText(first.wait);
  if (first.source != WakeSource::kNone) {
    text += "; " + names_.thread(first.waker_tid, kLatest) + " woke it";
  }
  return text + " (wake chain 1 below).";
}

std::string CorrelateStory::sentence(const Finding& f) const {
  switch (f.kind) {
    case FindingKind::kHolderOffCpu:
      return offCpuSentence(*f.held);
    case FindingKind::kHolderOnCpu:
      return onCpuSentence(*f.held, f.weight_ns);
    case FindingKind::kLongestWait:
      break;
  }
  return longestWaitSentence(correlation_.chains[f.chain]);
}

std::vector<std::string> CorrelateStory::notes(bool findings_left_out) const {
  std::vector<std::string> lines;
  const format::Header& header = trace_.header();
  const UnblamedWaits& unblamed = correlation_.unblamed;
  if (correlation_.sections == 0 && correlation_.waits == 0) {
    if (unblamed.count == 0 && correlation_.filtered) {
      lines.push_back("No lock events pass the filters: nothing to correlate.");
    } else if (unblamed.count == 0) {
      lines.push_back(header.options.lock_mode == "off"
                          ? "No lock events: the trace was recorded with --locks off (incise "
                            "record's default, --locks contended, records futex waits)."
                          : "No lock events: nothing to correlate.");
    } else {
      lines.push_back("No waits that blame a lock holder.");
    }
  }
  if (unblamed.count > 0) {
    const format::LockInterval& w = unblamed.longest;
    lines.push_back(
        "Not blamed on a holder, not being lock waits: " + waitKindList(unblamed.kinds) +
        "; the longest, " + formatDurationNs(w.acquired_time - w.time) + ", a " +
        std::string(waitKindName(unblamed.longest_kind)) + " wait by " +
        names_.thread(w.tid, kLatest) + " at " +
        describeStack(trace_.symbolizer(), trace_.stacks(), w.pid, w.stack_id, w.time, 2) +
        ". incise waits lists them.");
  }
  if (trace_.reader().rows(format::EventKind::kBlockSummary) != 0) {
    lines.push_back(
        "Off-CPU intervals shorter than the recording's --sched-min-block were counted, not "
        "written: wake chains and a holder's blocks inside its critical sections leave them "
        "out (preemptions are always written; every wait's lock, holder and waker are kept).");
  }
  bool off_cpu = std::any_of(correlation_.activity.held.begin(), correlation_.activity.held.end(),
                             [](const HeldLock& h) {
                               return inFocus(h) && h.preempted_switches + h.blocked_switches > 0;
                             });
  if (correlation_.sections > 0 && !off_cpu) {
    lines.push_back(header.options.sched_enabled
                        ? "No lock holder was switched out inside a critical section."
                        : "The trace has no scheduler events (recorded with --no-sched), so "
                          "holders switched out inside critical sections cannot be seen.");
  }
  if (correlation_.thread_filter) {
    lines.push_back(
        "Filtered: the findings are about the threads shown, as waiters or holders; a holder or "
        "waker that made them wait is named even when the filter leaves it out.");
  }
  if (findings_left_out) lines.push_back("More findings: --limit 0 lists them all.");
  return lines;
}

// ---- wake chains -------------------------------------------------------------------

std::string CorrelateStory::wakerText(const WakeLink& l) const {
  if (l.source == WakeSource::kNone) return "who woke it is unknown";
  std::string text = "woken by " + names_.thread(l.waker_tid, kLatest);
  if (l.waker_stack_id != 0) {
    text += " from " + describeStack(trace_.symbolizer(), trace_.stacks(), l.waker_pid,
                                     l.waker_stack_id, l.wake_time);
  } else if (l.source == WakeSource::kReleaser) {
    text += " (the releaser; no waker stack)";
  }
  return text;
}

void CorrelateStory::printTree(std::ostream& out) const {
  out << "\nWake chains of the longest lock waits (each wait once; under each, the wait that "
         "held up its waker)\n";
  if (tree_.empty()) {
    out << "  no lock waits\n";
    return;
  }
  const LockWait* above = nullptr;  // the wait on the line above, for "the same mutex"
  for (const WakeTreeNode& n : tree_) {
    const LockWait& w = n.link->wait;
    bool same_lock = n.depth > 0 && above && above->lock == w.lock;
    above = &w;
    std::string pad = n.depth == 0 ? "" : std::string(2 * (n.depth - 1), ' ') + "\u2514 ";
    std::string lead = n.depth == 0 ? std::to_string(n.chain) : "";
    lead.resize(std::max<size_t>(lead.size(), 3), ' ');
    std::string head = "  " + lead + pad;
    // Names and stacks come from the trace: each line is escaped as printed.
    if (n.see != 0) {
      out << terminalText(head + names_.thread(w.tid, kLatest) + "'s wait of " +
                          formatDurationNs(w.duration()) + ": as in chain " + std::to_string(n.see))
          << "\n";
      continue;
    }
    std::string also;
    for (size_t rank : n.ranks) {
      if (n.depth != 0 || rank != n.chain) also += (also.empty() ? "" : ", ") + ordinal(rank);
    }
    out << terminalText(
               head + names_.thread(w.tid, kLatest) + (n.depth == 0 ? " waited " : " had waited ") +
               (same_lock ? formatDurationNs(w.duration()) + " for the same " + lockNoun(w.kind)
                          : waitText(w)) +
               (also.empty() ? "" : " (the " + also + " longest)"))
        << "\n";
    out << "  " << std::string(3 + (n.depth == 0 ? 0 : 2 * n.depth), ' ')
        << terminalText(wakerText(*n.link)) << "\n";
  }
}

void CorrelateStory::print(std::ostream& out, size_t limit) const {
  std::vector<Finding> findings = rankFindings(correlation_, limit == 0 ? 0 : limit + 1);
  bool left_out = limit != 0 && findings.size() > limit;
  if (left_out) findings.resize(limit);
  if (correlation_.counts.mode == LockRecordingMode::kNone && correlation_.unblamed.count > 0) {
    out << noLockWaitsSentence() << "\n\n";
  } else {
    out << lockModeSentence(correlation_.counts.mode) << "\n";
    if (std::string go = goHoldsSentence(correlation_.counts.go_holds); !go.empty())
      out << go << "\n";
    out << "\n";
  }
  out << "Findings, by the waiting each explains\n";
  if (findings.empty()) out << "  none\n";
  for (size_t i = 0; i < findings.size(); ++i) {
    char number[32];
    std::snprintf(number, sizeof number, "%3zu. ", i + 1);
    out << number << terminalText(sentence(findings[i])) << "\n";
  }
  std::vector<std::string> lines = notes(left_out);
  if (!lines.empty()) out << "\n";
  for (const std::string& line : lines) out << "  " << terminalText(line) << "\n";
  printTree(out);
}

// ---- JSON ------------------------------------------------------------------------

nlohmann::json CorrelateStory::heldJson(const HeldLock& h) const {
  nlohmann::json entry = {{"holder", names_.threadJson(h.lock.pid, h.tid, kLatest)},
                          {"lock", {{"pid", h.lock.pid}, {"address", hexAddress(h.lock.address)}}},
                          {"kind", lockNoun(h.kind)},
                          {"site", sites_.name(h.site)},
                          {"inferred", h.inferred},
                          {"sections", h.sections},
                          {"held_ns", h.held_ns},
                          {"off_cpu_ns", h.off_cpu_ns()}};
  if (correlation_.thread_filter) {
    entry["holder_in_focus"] = h.holder_in_focus;
    entry["focus_waiter_ns_while_held"] = h.focus_waiter_ns_while_held;
    entry["focus_waiter_ns_while_off_cpu"] = h.focus_waiter_ns_while_off_cpu;
  }
  return entry;
}

nlohmann::json CorrelateStory::stacksJson(const HeldLock& h, const StackCounts& stacks) const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [stack, count] : topStacks(stacks)) {
    list.push_back({{"count", count},
                    {"stack", describeStack(trace_.symbolizer(), trace_.stacks(), h.lock.pid, stack,
                                            kLatest, 4)}});
  }
  return list;
}

nlohmann::json CorrelateStory::linkJson(const WakeLink& l) const {
  return {
      {"waiter", names_.threadJson(l.wait.lock.pid, l.wait.tid, kLatest)},
      {"lock", hexAddress(l.wait.lock.address)},
      {"kind", lockNoun(l.wait.kind)},
      {"site", sites_.name(sites_.siteOf(l.wait.stack_id))},
      {"wait_start_ns", l.wait.start - trace_.startTime()},
      {"wait_ns", l.wait.duration()},
      {"source", sourceName(l.source)},
      {"waker", l.source == WakeSource::kNone
                    ? nlohmann::json(nullptr)
                    : names_.threadJson(l.waker_pid, l.waker_tid, kLatest)},
      {"waker_stack", l.waker_stack_id == 0 ? nlohmann::json(nullptr)
                                            : nlohmann::json(describeStack(
                                                  trace_.symbolizer(), trace_.stacks(), l.waker_pid,
                                                  l.waker_stack_id, l.wake_time))},
  };
}

nlohmann::json CorrelateStory::findingJson(const Finding& f, size_t rank) const {
  nlohmann::json entry = {{"rank", rank},
                          {"kind", kindName(f.kind)},
                          {"weight_ns", f.weight_ns},
                          {"text", sentence(f)}};
  if (f.held) {  // the group's figures are in "preemption" and "inside_sections"
    entry["holder"] = names_.threadJson(f.held->lock.pid, f.held->tid, kLatest);
    entry["lock"] = {{"pid", f.held->lock.pid}, {"address", hexAddress(f.held->lock.address)}};
    entry["site"] = sites_.name(f.held->site);
  } else {
    entry["chain"] = f.chain + 1;
  }
  return entry;
}

nlohmann::json CorrelateStory::json(size_t limit) const {
  size_t rows = limit == 0 ? SIZE_MAX : limit;
  std::vector<Finding> findings = rankFindings(correlation_, limit == 0 ? 0 : limit + 1);
  bool left_out = limit != 0 && findings.size() > limit;
  if (left_out) findings.resize(limit);
  nlohmann::json summary = nlohmann::json::array();
  nlohmann::json findings_json = nlohmann::json::array();
  for (size_t i = 0; i < findings.size(); ++i) {
    findings_json.push_back(findingJson(findings[i], i + 1));
    if (i < kSummaryFindings) summary.push_back(findings_json.back()["text"]);
  }
  nlohmann::json notes_json = nlohmann::json::array();
  for (const std::string& line : notes(left_out)) {
    summary.push_back(line);
    notes_json.push_back(line);
  }

  nlohmann::json preemption = nlohmann::json::array();
  nlohmann::json inside = nlohmann::json::array();
  std::vector<const HeldLock*> by_activity;
  for (const HeldLock& h : correlation_.activity.held) {
    if (!inFocus(h)) continue;
    if (h.faults + h.samples > 0) by_activity.push_back(&h);
    if (preemption.size() == rows || h.preempted_switches + h.blocked_switches == 0) continue;
    nlohmann::json entry = heldJson(h);
    entry["sections_switched_out"] = h.sections_switched_out;
    entry["preempted_switches"] = h.preempted_switches;
    entry["blocked_switches"] = h.blocked_switches;
    entry["off_cpu_preempted_ns"] = h.off_cpu_preempted_ns;
    entry["off_cpu_blocked_ns"] = h.off_cpu_blocked_ns;
    entry["waiters_while_off_cpu"] = h.waiters_while_off_cpu;
    entry["waiter_ns_while_off_cpu"] = h.waiter_ns_while_off_cpu;
    entry["waiter_ns_while_held"] = h.waiter_ns_while_held;
    preemption.push_back(entry);
  }
  // Most faults, then samples, first.
  std::stable_sort(by_activity.begin(), by_activity.end(),
                   [](const HeldLock* a, const HeldLock* b) {
                     return std::tie(b->faults, b->samples) < std::tie(a->faults, a->samples);
                   });
  if (by_activity.size() > rows) by_activity.resize(rows);
  for (const HeldLock* held : by_activity) {
    const HeldLock& h = *held;
    const ThreadActivity* t = threadActivity(correlation_.activity, h.tid);
    nlohmann::json entry = heldJson(h);
    entry["faults"] = h.faults;
    entry["thread_faults"] = t ? t->faults : 0;
    entry["faults_percent_of_thread"] = roundedPercent(percentOf(h.faults, t ? t->faults : 0));
    entry["samples"] = h.samples;
    entry["thread_samples"] = t ? t->samples : 0;
    entry["samples_percent_of_thread"] = roundedPercent(percentOf(h.samples, t ? t->samples : 0));
    entry["fault_stacks"] = stacksJson(h, h.fault_stacks);
    entry["sample_stacks"] = stacksJson(h, h.sample_stacks);
    inside.push_back(entry);
  }

  nlohmann::json chains = nlohmann::json::array();
  for (const WakeChain& chain : correlation_.chains) {
    nlohmann::json links = nlohmann::json::array();
    for (const WakeLink& l : chain.links) links.push_back(linkJson(l));
    chains.push_back({{"links", links}});
  }
  nlohmann::json tree = nlohmann::json::array();
  for (const WakeTreeNode& n : tree_) {
    nlohmann::json node = {{"depth", n.depth}, {"chain", n.chain}, {"ranks", n.ranks}};
    if (n.see != 0) {
      node["see_chain"] = n.see;
      node["waiter"] = names_.threadJson(n.link->wait.lock.pid, n.link->wait.tid, kLatest);
      node["wait_ns"] = n.link->wait.duration();
    } else {
      node["link"] = linkJson(*n.link);
    }
    tree.push_back(node);
  }
  const UnblamedWaits& unblamed = correlation_.unblamed;
  nlohmann::json unblamed_json = {{"count", unblamed.count},
                                  {"total_ns", unblamed.total_ns},
                                  {"kinds", waitKindsJson(unblamed.kinds)}};
  if (unblamed.count > 0) {
    const format::LockInterval& w = unblamed.longest;
    unblamed_json["longest"] = {
        {"waiter", names_.threadJson(w.pid, w.tid, kLatest)},
        {"address", hexAddress(w.address)},
        {"kind", std::string(waitKindName(unblamed.longest_kind))},
        {"wait_start_ns", w.time - trace_.startTime()},
        {"wait_ns", w.acquired_time - w.time},
        {"stack", describeStack(trace_.symbolizer(), trace_.stacks(), w.pid, w.stack_id, w.time)}};
  }
  return {{"summary", summary},       {"findings", findings_json},      {"notes", notes_json},
          {"preemption", preemption}, {"inside_sections", inside},      {"wake_chains", chains},
          {"wake_tree", tree},        {"unblamed_waits", unblamed_json}};
}

}  // namespace incise::analyzer
