// An allocation profile's stacks named, merged by name and given a site:
// the function that asked for the memory, the first frame from the leaf
// that is not an allocator's own entry point or wrapper (operator new,
// strdup, std::allocator and the like), so `new T` in parse_request is
// charged to parse_request.
//
//   StackNamer namer(trace, FrameGrouping::kFunction);
//   for (const AllocSite& site : namedAllocSites(profile, namer))
//     print(site.site, site.totals.allocated_bytes, site.totals.live_bytes);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/analyses/alloc/alloc_profile.h"
#include "analyzer/model/stack_namer.h"

namespace incise::analyzer {

struct AllocSite {
  std::string site;                     // "[no stack]" without frames
  std::vector<std::string> root_first;  // the whole call path
  AllocTotals totals;
};

// Most bytes allocated first (then the path, for a stable order).
std::vector<AllocSite> namedAllocSites(const AllocProfile& profile, StackNamer& namer);
// The call paths of each site merged, in the order given; a site's path is
// the first of its paths (given namedAllocSites' order: its largest).
std::vector<AllocSite> mergedBySite(const std::vector<AllocSite>& paths);

// The site of a call path, root first: see above.
std::string allocationSite(const std::vector<std::string>& root_first);
// Whether a function is an allocator entry point or wrapper, not a site.
bool isAllocatorFrame(std::string_view function);

}  // namespace incise::analyzer
