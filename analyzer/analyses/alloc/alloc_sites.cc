#include "analyzer/analyses/alloc/alloc_sites.h"

#include <algorithm>
#include <array>
#include <map>

namespace incise::analyzer {

bool isAllocatorFrame(std::string_view function) {
  static constexpr std::array<std::string_view, 12> kExact = {
      "malloc",   "calloc", "realloc", "reallocarray", "aligned_alloc", "posix_memalign",
      "memalign", "valloc", "strdup",  "strndup",      "mmap",          "mmap64"};
  static constexpr std::array<std::string_view, 6> kPrefixes = {
      "operator new",          "std::allocator",
      "std::__new_allocator",  "__gnu_cxx::new_allocator",
      "std::allocator_traits", "__gnu_cxx::__alloc_traits"};
  if (std::find(kExact.begin(), kExact.end(), function) != kExact.end()) return true;
  return std::any_of(kPrefixes.begin(), kPrefixes.end(),
                     [&](std::string_view prefix) { return function.starts_with(prefix); });
}

std::string allocationSite(const std::vector<std::string>& root_first) {
  for (auto frame = root_first.rbegin(); frame != root_first.rend(); ++frame) {
    if (!isAllocatorFrame(*frame)) return *frame;
  }
  return root_first.empty() ? "[no stack]" : root_first.back();
}

std::vector<AllocSite> namedAllocSites(const AllocProfile& profile, StackNamer& namer) {
  std::map<std::vector<std::string>, AllocTotals> by_path;
  for (const auto& [key, totals] : profile.stacks) {
    by_path[namer.rootFirstNames(key.pid, key.stack_id, totals.first_time)].add(totals);
  }
  std::vector<AllocSite> sites;
  sites.reserve(by_path.size());
  for (auto& [path, totals] : by_path) sites.push_back({allocationSite(path), path, totals});
  std::stable_sort(sites.begin(), sites.end(), [](const AllocSite& a, const AllocSite& b) {
    return a.totals.allocated_bytes > b.totals.allocated_bytes;
  });
  return sites;
}

std::vector<AllocSite> mergedBySite(const std::vector<AllocSite>& paths) {
  std::map<std::string, size_t> index;
  std::vector<AllocSite> sites;
  for (const AllocSite& path : paths) {
    auto [at, inserted] = index.emplace(path.site, sites.size());
    if (inserted) {
      sites.push_back(path);
    } else {
      sites[at->second].totals.add(path.totals);
    }
  }
  return sites;
}

}  // namespace incise::analyzer
