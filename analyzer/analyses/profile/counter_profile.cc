#include "analyzer/analyses/profile/counter_profile.h"

#include <algorithm>

#include "analyzer/analyses/profile/flat_profile.h"

namespace incise::analyzer {

std::vector<CounterCounts> CounterProfile::of(const std::string& name) const {
  auto found = by_name.find(name);
  return found == by_name.end() ? std::vector<CounterCounts>(names.size()) : found->second;
}

CounterProfile computeCounterProfile(const Trace& trace, const std::vector<StackWeights>& counts,
                                     StackNamer& namer) {
  CounterProfile profile;
  const std::vector<std::string>& counters = trace.header().options.counters;
  const size_t slots = std::min(counters.size(), counts.size());
  profile.names.assign(counters.begin(), counters.begin() + static_cast<std::ptrdiff_t>(slots));
  profile.totals.assign(slots, 0);
  for (size_t c = 0; c < slots; ++c) {
    FlatProfile flat = computeFlatProfile(counts[c].named(namer));
    profile.totals[c] = flat.weight;
    for (const FlatProfileRow& row : flat.rows) {
      std::vector<CounterCounts>& of = profile.by_name[row.name];
      of.resize(slots);
      of[c] = {row.self, row.total};
    }
  }
  return profile;
}

}  // namespace incise::analyzer
