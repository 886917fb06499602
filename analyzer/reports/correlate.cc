// `incise correlate`: the story report. Which lock holders were switched
// out inside their critical sections (preempted or blocked) and how much
// waiting that caused; what holders did inside sections (CPU samples, page
// faults, by stack); and who woke the longest waiters, from where.
//
// Memory: one time-ordered pass over lock rows, switches, samples, faults and
// wake-ups. Lock rows become sections and waits as they arrive (inferred
// sections once their wake is settled, critical_sections.h); a thread's
// other rows wait only while a section of it may still come that covers
// them; sections are dropped once ended, waits once no section may overlap
// them, settled waits once no longer wait can link to them. What grows is
// per (holder, lock, site) group and per site (holder_activity.h,
// wake_chains.h).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unordered_map>

#include "analyzer/model/time_ordered_rows.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"
#include "analyzer/reports/critical_sections.h"
#include "analyzer/reports/holder_activity.h"
#include "analyzer/reports/lock_report_command.h"
#include "analyzer/reports/lock_report_text.h"
#include "analyzer/reports/lock_sites.h"
#include "analyzer/reports/wake_chains.h"

namespace incise::analyzer {
namespace {

constexpr uint64_t kLatest = UINT64_MAX;  // name threads by their last known name
constexpr size_t kTopStacks = 3;
constexpr size_t kChainDepth = 4;

struct CorrelateOptions {
  size_t limit = 10;
  size_t chains = 5;
};

struct Inputs {
  LockRowCounts counts;
  uint64_t sections = 0;
  uint64_t waits = 0;
  uint64_t holder_switches = 0;  // switches in plus switches out of lock holders
};

struct Correlation {
  HolderActivity activity;
  std::vector<WakeChain> chains;
};

// Where a site's first stack came in the order the whole-trace pass named
// sites (sections by holder and start, then waits by lock and start): ties
// among groups are broken by that order, as before.
class SiteOrder {
 public:
  using Key = std::tuple<int, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t>;
  void add(uint64_t site, const Key& key) {
    auto [it, fresh] = first_.try_emplace(site, key);
    if (!fresh) it->second = std::min(it->second, key);
  }
  // site -> rank (0 stays 0: the unknown site).
  std::unordered_map<uint64_t, uint64_t> ranks() const {
    std::vector<std::pair<Key, uint64_t>> by_key;
    for (const auto& [site, key] : first_) by_key.emplace_back(key, site);
    std::sort(by_key.begin(), by_key.end());
    std::unordered_map<uint64_t, uint64_t> rank{{0, 0}};
    for (const auto& [key, site] : by_key) rank.try_emplace(site, rank.size());
    return rank;
  }

 private:
  std::unordered_map<uint64_t, Key> first_;
};

// One time-ordered pass over every lock row, switch, sample, fault and
// wake-up.
Correlation correlate(Trace& trace, Inputs& in, LockSites& sites, size_t chains) {
  SiteOf site_of = [&](uint64_t stack) { return sites.siteOf(stack); };
  HolderActivityBuilder holders(site_of);
  LongestWaitChains longest(chains, kChainDepth);
  SiteOrder site_order;
  LockRowStream stream({.section =
                            [&](const CriticalSection& s) {
                              sites.add(s.lock.pid, s.stack_id, s.start);
                              site_order.add(site_of(s.stack_id), {0, s.tid, s.start, s.end,
                                                                   s.lock.pid, s.lock.address});
                              holders.addSection(s);
                              ++in.sections;
                            },
                        .wait =
                            [&](const LockWait& w) {
                              sites.add(w.lock.pid, w.stack_id, w.start);
                              site_order.add(site_of(w.stack_id), {1, w.lock.pid, w.lock.address,
                                                                   w.start, w.end, w.tid});
                              holders.addWait(w);
                              longest.addWait(w);
                              ++in.waits;
                            }});
  TimeOrderedRows<format::LockInterval> locks(trace, /*progress=*/false);
  if (locks.peek() != nullptr) {
    TimeOrderedRows<format::SchedSwitch> switches(trace);
    TimeOrderedRows<format::CpuSample> samples(trace, /*progress=*/false);
    TimeOrderedRows<format::PageFault> faults(trace, /*progress=*/false);
    TimeOrderedRows<format::Wakeup> wakeups(trace, /*progress=*/false);
    bool started = false;
    uint64_t settled = 0;
    for (;;) {
      const format::LockInterval* lock = locks.peek();
      const format::SchedSwitch* sw = switches.peek();
      const format::CpuSample* sample = samples.peek();
      const format::PageFault* fault = faults.peek();
      const format::Wakeup* wake = wakeups.peek();
      if (!lock && !sw && !sample && !fault && !wake) break;
      uint64_t now = UINT64_MAX;
      for (const uint64_t* time : {lock ? &lock->time : nullptr, sw ? &sw->time : nullptr,
                                   sample ? &sample->time : nullptr, fault ? &fault->time : nullptr,
                                   wake ? &wake->time : nullptr}) {
        if (time) now = std::min(now, *time);
      }
      if (!started || now > settled) {  // everything before `now` is in
        stream.settleBefore(now);
        holders.settle(now, &stream);
        longest.settle(now);
        started = true;
        settled = now;
      }
      if (lock && lock->time == now) {
        stream.add(*lock);
        locks.pop();
      } else if (sw && sw->time == now) {
        holders.add(*sw);
        switches.pop();
      } else if (sample && sample->time == now) {
        holders.add(*sample);
        samples.pop();
      } else if (fault && fault->time == now) {
        holders.add(*fault);
        faults.pop();
      } else {
        longest.add(*wake);
        wakeups.pop();
      }
    }
  }
  in.counts = stream.finish();
  // Equal groups in the order of their sites' first stacks (see SiteOrder).
  std::unordered_map<uint64_t, uint64_t> rank = site_order.ranks();
  Correlation result{
      holders.finish(/*idle_groups=*/false, [&](uint64_t site) { return rank.at(site); }),
      longest.finish()};
  in.holder_switches = result.activity.holder_switches;
  return result;
}

const ThreadActivity* threadActivity(const HolderActivity& activity, uint64_t tid) {
  auto it =
      std::lower_bound(activity.threads.begin(), activity.threads.end(), tid,
                       [](const ThreadActivity& t, uint64_t wanted) { return t.tid < wanted; });
  return it != activity.threads.end() && it->tid == tid ? &*it : nullptr;
}

std::string plural(uint64_t n, const char* one, const char* many) {
  return formatCount(n) + " " + (n == 1 ? one : many);
}

std::string percentText(uint64_t part, uint64_t whole) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%.0f%%", percentOf(part, whole));
  return buffer;
}

class Story {
 public:
  Story(Trace& trace, const Inputs& in, const HolderActivity& activity,
        const std::vector<WakeChain>& chains, const LockSites& sites)
      : trace_(trace),
        in_(in),
        activity_(activity),
        chains_(chains),
        sites_(sites),
        names_(trace, sites) {}

  std::string lockAt(const HeldLock& h) const {
    return "lock " + hexAddress(h.lock.address) + " (site: " + sites_.name(h.site) + ")";
  }

  std::string preemptionSentence(const HeldLock& h) const {
    std::string text = "thread " + names_.thread(h.tid, kLatest) + " held " + lockAt(h) +
                       " and was switched out " +
                       plural(h.preempted_switches + h.blocked_switches, "time", "times") +
                       " inside it (" + formatCount(h.preempted_switches) + " preempted, " +
                       formatCount(h.blocked_switches) + " blocked) for " +
                       formatDurationNs(h.off_cpu_ns()) + " off-CPU in total";
    if (h.waiters_while_off_cpu > 0) {
      text += "; " + plural(h.waiters_while_off_cpu, "waiter", "waiters") + " lost " +
              formatDurationNs(h.waiter_ns_while_off_cpu) + " waiting meanwhile";
    }
    return text + (h.inferred ? " (hold inferred from wakes)." : ".");
  }

  // "71% of page faults in thread T came while it held lock L taken at site S."
  std::string insideSentence(const HeldLock& h, bool faults) const {
    const ThreadActivity* t = threadActivity(activity_, h.tid);
    uint64_t inside = faults ? h.faults : h.samples;
    uint64_t all = t ? (faults ? t->faults : t->samples) : inside;
    return percentText(inside, all) + " of the " + (faults ? "page faults" : "CPU samples") +
           " in thread " + names_.thread(h.tid, kLatest) + " (" + formatCount(inside) + " of " +
           formatCount(all) + ") came while it held " + lockAt(h) + ".";
  }

  std::string chainSentence(const WakeChain& chain) const {
    std::string text;
    for (size_t i = 0; i < chain.links.size(); ++i) {
      const WakeLink& l = chain.links[i];
      text += i == 0 ? "thread " : "; it had itself waited, as thread ";
      text += names_.thread(l.wait.tid, kLatest) + " waited " +
              formatDurationNs(l.wait.duration()) + " for lock " + hexAddress(l.wait.lock.address) +
              " at " + sites_.name(sites_.siteOf(l.wait.stack_id));
      if (l.source == WakeSource::kNone) {
        text += "; who woke it is unknown";
      } else {
        text += "; " + names_.thread(l.waker_tid, kLatest) + " woke it";
        if (l.waker_stack_id != 0) {
          text += " from " + describeStack(trace_.symbolizer(), trace_.stacks(), l.waker_pid,
                                           l.waker_stack_id, l.wake_time);
        } else if (l.source == WakeSource::kReleaser) {
          text += " (the releaser; no waker stack)";
        }
      }
    }
    return text + ".";
  }

  std::vector<std::string> summary() const {
    std::vector<std::string> lines;
    const HeldLock* preempted = nullptr;
    const HeldLock* faulting = nullptr;
    const HeldLock* sampled = nullptr;
    for (const HeldLock& h : activity_.held) {
      if (!preempted && h.off_cpu_ns() > 0) preempted = &h;
      if (h.faults > 0 && (!faulting || h.faults > faulting->faults)) faulting = &h;
      if (h.samples > 0 && (!sampled || h.samples > sampled->samples)) sampled = &h;
    }
    if (in_.sections == 0 && in_.waits == 0) {
      lines.push_back("No lock events: nothing to correlate.");
      return lines;
    }
    if (preempted) {
      std::string s = preemptionSentence(*preempted);
      s[0] = 'T';
      lines.push_back(s);
    } else {
      lines.push_back("No lock holder was switched out inside a critical section.");
    }
    if (faulting) lines.push_back(insideSentence(*faulting, true));
    if (sampled) lines.push_back(insideSentence(*sampled, false));
    if (!chains_.empty()) {
      std::string s = "The longest wait: " + chainSentence(chains_.front());
      lines.push_back(s);
    }
    if (in_.holder_switches == 0)
      lines.push_back("No scheduler events: record with --sched to see preemption.");
    return lines;
  }

  void printPreemption(std::ostream& out, size_t limit) const {
    Table table({{"HOLDER", Align::kLeft, 28},
                 {"LOCK (SITE)", Align::kLeft, 40},
                 {"SECTIONS", Align::kRight},
                 {"SWITCHED", Align::kRight},
                 {"PREEMPT", Align::kRight},
                 {"BLOCK", Align::kRight},
                 {"OFF-CPU", Align::kRight},
                 {"WAITERS", Align::kRight},
                 {"WAIT LOST", Align::kRight},
                 {"WAIT WHILE HELD", Align::kRight}});
    for (const HeldLock& h : activity_.held) {
      if (table.rows() == limit) break;
      if (h.preempted_switches + h.blocked_switches == 0) continue;
      table.addRow(
          {names_.thread(h.tid, kLatest),
           hexAddress(h.lock.address) + " (" + sites_.name(h.site) + ")" + (h.inferred ? "*" : ""),
           formatCount(h.sections), formatCount(h.sections_switched_out),
           formatCount(h.preempted_switches), formatCount(h.blocked_switches),
           formatDurationNs(h.off_cpu_ns()), formatCount(h.waiters_while_off_cpu),
           formatDurationNs(h.waiter_ns_while_off_cpu), formatDurationNs(h.waiter_ns_while_held)});
    }
    out << "\n(a) Lock holders switched out inside critical sections\n";
    if (table.rows() == 0) {
      out << "  none\n";
      return;
    }
    table.render(out);
    out << "WAIT LOST: other threads' wait on the lock while the holder was off-CPU inside it.\n";
  }

  void printInside(std::ostream& out, size_t limit) const {
    out << "\n(b) What holders did inside critical sections\n";
    size_t shown = 0;
    for (const HeldLock* held : byActivity()) {
      const HeldLock& h = *held;
      if (shown++ == limit) break;
      out << "  " << names_.thread(h.tid, kLatest) << " holding " << terminalText(lockAt(h))
          << ":\n";
      if (h.faults > 0) {
        out << "    " << terminalText(insideSentence(h, true)) << "\n";
        printStacks(out, h, h.fault_stacks, "faults");
      }
      if (h.samples > 0) {
        out << "    " << terminalText(insideSentence(h, false)) << "\n";
        printStacks(out, h, h.sample_stacks, "samples");
      }
    }
    if (shown == 0) out << "  no samples or page faults inside critical sections\n";
  }

  void printChains(std::ostream& out) const {
    out << "\n(c) Who woke the longest waiters\n";
    if (chains_.empty()) out << "  no lock waits\n";
    for (const WakeChain& chain : chains_)
      out << "  " << terminalText(chainSentence(chain)) << "\n";
  }

  nlohmann::json json(size_t limit) const {
    nlohmann::json preemption = nlohmann::json::array();
    for (const HeldLock& h : activity_.held) {
      if (preemption.size() == limit) break;
      if (h.preempted_switches + h.blocked_switches == 0) continue;
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
    nlohmann::json inside = nlohmann::json::array();
    for (const HeldLock* held : byActivity()) {
      const HeldLock& h = *held;
      if (inside.size() == limit) break;
      const ThreadActivity* t = threadActivity(activity_, h.tid);
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
    for (const WakeChain& chain : chains_) {
      nlohmann::json links = nlohmann::json::array();
      for (const WakeLink& l : chain.links) {
        links.push_back({
            {"waiter", names_.threadJson(l.wait.lock.pid, l.wait.tid, kLatest)},
            {"lock", hexAddress(l.wait.lock.address)},
            {"wait_start_ns", l.wait.start - trace_.startTime()},
            {"wait_ns", l.wait.duration()},
            {"source", l.source == WakeSource::kWakeupEvent ? "wakeup"
                       : l.source == WakeSource::kReleaser  ? "releaser"
                                                            : "unknown"},
            {"waker", l.source == WakeSource::kNone
                          ? nlohmann::json(nullptr)
                          : names_.threadJson(l.waker_pid, l.waker_tid, kLatest)},
            {"waker_stack",
             l.waker_stack_id == 0
                 ? nlohmann::json(nullptr)
                 : nlohmann::json(describeStack(trace_.symbolizer(), trace_.stacks(), l.waker_pid,
                                                l.waker_stack_id, l.wake_time))},
        });
      }
      chains.push_back({{"links", links}, {"text", chainSentence(chain)}});
    }
    return {{"summary", summary()},
            {"preemption", preemption},
            {"inside_sections", inside},
            {"wake_chains", chains}};
  }

 private:
  // Held locks with samples or faults inside, most faults then samples first
  // (pointers: there may be one per critical section).
  std::vector<const HeldLock*> byActivity() const {
    std::vector<const HeldLock*> list;
    for (const HeldLock& h : activity_.held) {
      if (h.faults + h.samples > 0) list.push_back(&h);
    }
    std::stable_sort(list.begin(), list.end(), [](const HeldLock* a, const HeldLock* b) {
      return std::tie(b->faults, b->samples) < std::tie(a->faults, a->samples);
    });
    return list;
  }

  nlohmann::json heldJson(const HeldLock& h) const {
    return {{"holder", names_.threadJson(h.lock.pid, h.tid, kLatest)},
            {"lock", {{"pid", h.lock.pid}, {"address", hexAddress(h.lock.address)}}},
            {"site", sites_.name(h.site)},
            {"inferred", h.inferred},
            {"sections", h.sections},
            {"held_ns", h.held_ns},
            {"off_cpu_ns", h.off_cpu_ns()}};
  }

  std::vector<std::pair<uint64_t, uint64_t>> topStacks(const StackCounts& stacks) const {
    std::vector<std::pair<uint64_t, uint64_t>> list(stacks.begin(), stacks.end());
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (list.size() > kTopStacks) list.resize(kTopStacks);
    return list;
  }

  std::string stackText(const HeldLock& h, uint64_t stack_id) const {
    return describeStack(trace_.symbolizer(), trace_.stacks(), h.lock.pid, stack_id, kLatest, 4);
  }

  void printStacks(std::ostream& out, const HeldLock& h, const StackCounts& stacks,
                   const char* what) const {
    for (const auto& [stack, count] : topStacks(stacks)) {
      out << "      " << formatCount(count) << " " << what << " at "
          << terminalText(stackText(h, stack)) << "\n";
    }
  }

  nlohmann::json stacksJson(const HeldLock& h, const StackCounts& stacks) const {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [stack, count] : topStacks(stacks)) {
      list.push_back({{"count", count}, {"stack", stackText(h, stack)}});
    }
    return list;
  }

  Trace& trace_;
  const Inputs& in_;
  const HolderActivity& activity_;
  const std::vector<WakeChain>& chains_;
  const LockSites& sites_;
  LockNames names_;
};

int reportCorrelate(Trace& trace, const ReportOutput& output, const CorrelateOptions& options) {
  Inputs in;
  LockSites sites(trace.symbolizer(), trace.stacks());
  Correlation correlation = correlate(trace, in, sites, options.chains);
  Story story(trace, in, correlation.activity, correlation.chains, sites);
  size_t limit = options.limit == 0 ? SIZE_MAX : options.limit;

  if (output.json) {
    nlohmann::json doc = story.json(limit);
    doc["header"] = output.headerJson();
    doc["lock_mode"] = lockModeName(in.counts.mode);
    doc["recorded_lock_mode"] = trace.header().options.lock_mode;
    doc["inferred_sections"] = in.counts.inferred_sections;
    writeJson(output.out(), doc);
    return 0;
  }
  std::ostream& out = output.out();
  output.printHeader();
  out << lockModeSentence(in.counts.mode) << "\n\nSummary\n";
  for (const std::string& line : story.summary()) out << "  " << terminalText(line) << "\n";
  story.printPreemption(out, limit);
  story.printInside(out, limit);
  story.printChains(out);
  return 0;
}

}  // namespace

int runCorrelate(const std::vector<std::string>& args) {
  CorrelateOptions options;
  ReportCommand command(
      "correlate",
      "The story: lock holders preempted or faulting inside critical sections, and the waiting "
      "they caused.",
      "  incise correlate app.trace              # the story, in words and tables\n"
      "  incise correlate app.trace --comm api   # only the api process's threads\n"
      "  incise correlate app.trace --json       # the same figures as JSON\n");
  command.options().add_options()                                                   //
      ("limit", boost::program_options::value(&options.limit)->default_value(10),   //
       "rows per section (0 = all)")                                                //
      ("chains", boost::program_options::value(&options.chains)->default_value(5),  //
       "longest waits to explain");
  return command.run(args, [&](Trace& trace, const ReportOutput& output) {
    return reportCorrelate(trace, output, options);
  });
}

}  // namespace incise::analyzer
