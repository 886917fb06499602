#include "analyzer/analyses/correlate/correlate_findings.h"

#include <algorithm>

namespace incise::analyzer {

bool inFocus(const HeldLock& held) {
  return held.holder_in_focus || held.focus_waiter_ns_while_held > 0;
}

std::vector<Finding> rankFindings(const Correlation& correlation, size_t limit) {
  // The heaviest `limit` as they come (a heap, not every group's finding:
  // there may be one group per section); equal weights: the earlier first.
  struct Ranked {
    Finding finding;
    uint64_t order = 0;
  };
  auto heavier = [](const Ranked& a, const Ranked& b) {
    return a.finding.weight_ns != b.finding.weight_ns ? a.finding.weight_ns > b.finding.weight_ns
                                                      : a.order < b.order;
  };
  std::vector<Ranked> kept;  // a heap whose top is the lightest kept
  uint64_t order = 0;
  auto offer = [&](const Finding& f) {
    kept.push_back({f, order++});
    std::push_heap(kept.begin(), kept.end(), heavier);
    if (limit != 0 && kept.size() > limit) {
      std::pop_heap(kept.begin(), kept.end(), heavier);
      kept.pop_back();
    }
  };
  for (const HeldLock& h : correlation.activity.held) {
    if (!inFocus(h)) continue;
    if (h.preempted_switches + h.blocked_switches > 0) {
      offer({.kind = FindingKind::kHolderOffCpu,
             .weight_ns = h.focus_waiter_ns_while_off_cpu,
             .held = &h});
    }
    if (h.samples + h.faults > 0) {
      uint64_t on_cpu = h.focus_waiter_ns_while_held > h.focus_waiter_ns_while_off_cpu
                            ? h.focus_waiter_ns_while_held - h.focus_waiter_ns_while_off_cpu
                            : 0;
      offer({.kind = FindingKind::kHolderOnCpu, .weight_ns = on_cpu, .held = &h});
    }
  }
  if (!correlation.chains.empty() && !correlation.chains.front().links.empty()) {
    offer({.kind = FindingKind::kLongestWait,
           .weight_ns = correlation.chains.front().links.front().wait.duration(),
           .chain = 0});
  }
  std::sort(kept.begin(), kept.end(), heavier);
  std::vector<Finding> findings;
  for (const Ranked& r : kept) findings.push_back(r.finding);
  return findings;
}

}  // namespace incise::analyzer
