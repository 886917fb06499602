#include "analyzer/diff/profile_diff.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace incise::analyzer {
namespace {

// ns or calls per second of a trace that covers `window_ns`.
double perSecond(uint64_t amount, uint64_t window_ns) {
  return window_ns == 0 ? 0 : static_cast<double>(amount) * 1e9 / static_cast<double>(window_ns);
}

uint64_t largestChange(const LockSiteDelta& d) {
  return std::max({std::abs(d.waitP50Delta()), std::abs(d.waitP99Delta()),
                   std::abs(d.holdP50Delta()), std::abs(d.holdP99Delta())});
}

}  // namespace

std::vector<FunctionDelta> diffFunctions(const FlatProfile& base, const FlatProfile& next) {
  std::map<std::string, FunctionDelta> by_name;
  for (const FlatProfileRow& row : base.rows) {
    FunctionDelta& d = by_name[row.name];
    d.base_self = row.self;
    d.base_total = row.total;
    d.base_self_percent = row.self_percent;
    d.base_total_percent = row.total_percent;
  }
  for (const FlatProfileRow& row : next.rows) {
    FunctionDelta& d = by_name[row.name];
    d.new_self = row.self;
    d.new_total = row.total;
    d.new_self_percent = row.self_percent;
    d.new_total_percent = row.total_percent;
  }
  std::vector<FunctionDelta> rows;
  rows.reserve(by_name.size());
  for (auto& [name, d] : by_name) {
    d.name = name;
    rows.push_back(std::move(d));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const FunctionDelta& a, const FunctionDelta& b) {
    double sa = std::abs(a.selfDelta()), sb = std::abs(b.selfDelta());
    if (sa != sb) return sa > sb;
    return std::abs(a.totalDelta()) > std::abs(b.totalDelta());
  });
  return rows;
}

std::vector<LockSiteDelta> diffLockSites(const std::vector<LockSiteSummary>& base,
                                         const std::vector<LockSiteSummary>& next) {
  std::map<std::string, LockSiteDelta> by_site;
  for (const LockSiteSummary& s : base) {
    LockSiteDelta& d = by_site[s.site];
    d.in_base = true;
    d.base = s;
    d.context = s.context;
  }
  for (const LockSiteSummary& s : next) {
    LockSiteDelta& d = by_site[s.site];
    d.in_new = true;
    d.next = s;
    d.context = s.context;
  }
  std::vector<LockSiteDelta> rows;
  for (auto& [site, d] : by_site) {
    d.site = site;
    rows.push_back(std::move(d));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const LockSiteDelta& a, const LockSiteDelta& b) {
    return largestChange(a) > largestChange(b);
  });
  return rows;
}

std::vector<OffCpuDelta> diffOffCpu(const FoldedStacks& base, uint64_t base_window_ns,
                                    const FoldedStacks& next, uint64_t new_window_ns) {
  std::map<std::string, OffCpuDelta> by_path;
  for (const auto& [path, ns] : base.paths()) by_path[path].base_ns = ns;
  for (const auto& [path, ns] : next.paths()) by_path[path].new_ns = ns;
  std::vector<OffCpuDelta> rows;
  rows.reserve(by_path.size());
  for (auto& [path, d] : by_path) {
    d.root_first = FoldedStacks::split(path);
    d.base_ns_per_s = perSecond(d.base_ns, base_window_ns);
    d.new_ns_per_s = perSecond(d.new_ns, new_window_ns);
    rows.push_back(std::move(d));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const OffCpuDelta& a, const OffCpuDelta& b) {
    return std::abs(a.perSecondDelta()) > std::abs(b.perSecondDelta());
  });
  return rows;
}

std::vector<LatencyDelta> diffLatency(const std::vector<LatencySummary>& base,
                                      uint64_t base_window_ns,
                                      const std::vector<LatencySummary>& next,
                                      uint64_t new_window_ns) {
  std::map<std::pair<std::string, std::string>, LatencyDelta> by_name;
  for (const LatencySummary& s : base) {
    LatencyDelta& d = by_name[{s.kind, s.name}];
    d.in_base = true;
    d.base = s;
  }
  for (const LatencySummary& s : next) {
    LatencyDelta& d = by_name[{s.kind, s.name}];
    d.in_new = true;
    d.next = s;
  }
  std::vector<LatencyDelta> rows;
  rows.reserve(by_name.size());
  for (auto& [key, d] : by_name) {
    d.kind = key.first;
    d.name = key.second;
    d.base_calls_per_s = perSecond(d.base.count, base_window_ns);
    d.new_calls_per_s = perSecond(d.next.count, new_window_ns);
    rows.push_back(std::move(d));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const LatencyDelta& a, const LatencyDelta& b) {
    return std::abs(a.p99Delta()) > std::abs(b.p99Delta());
  });
  return rows;
}

std::vector<AllocSiteDelta> diffAllocSites(const std::vector<AllocSite>& base,
                                           uint64_t base_window_ns,
                                           const std::vector<AllocSite>& next,
                                           uint64_t new_window_ns) {
  std::map<std::string, AllocSiteDelta> by_site;
  for (const AllocSite& s : base) {
    AllocSiteDelta& d = by_site[s.site];
    d.in_base = true;
    d.base = s.totals;
    d.root_first = s.root_first;
  }
  for (const AllocSite& s : next) {
    AllocSiteDelta& d = by_site[s.site];
    d.in_new = true;
    d.next = s.totals;
    if (!d.in_base || s.totals.allocated_bytes > d.base.allocated_bytes)
      d.root_first = s.root_first;
  }
  std::vector<AllocSiteDelta> rows;
  rows.reserve(by_site.size());
  for (auto& [site, d] : by_site) {
    d.site = site;
    d.base_bytes_per_s = perSecond(d.base.allocated_bytes, base_window_ns);
    d.new_bytes_per_s = perSecond(d.next.allocated_bytes, new_window_ns);
    rows.push_back(std::move(d));
  }
  // A leak that grew matters as much as a rate that grew: both in bytes,
  // the larger of the two orders the rows.
  auto change = [](const AllocSiteDelta& d) {
    return std::max(std::abs(d.allocatedPerSecondDelta()),
                    std::abs(static_cast<double>(d.liveDelta())));
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const AllocSiteDelta& a, const AllocSiteDelta& b) {
    return change(a) > change(b);
  });
  return rows;
}

}  // namespace incise::analyzer
