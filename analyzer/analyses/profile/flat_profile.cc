#include "analyzer/analyses/profile/flat_profile.h"

#include <algorithm>
#include <limits>

#include "analyzer/render/table.h"

namespace incise::analyzer {

FlatProfile computeFlatProfile(const NamedStacks& stacks) {
  FlatProfile profile;
  const NameTable& names = stacks.names();
  // Tallies indexed by name id; `counted_in` marks the last stack that added
  // to a name's total, so recursion counts once per stack.
  std::vector<uint64_t> self(names.size()), total(names.size());
  std::vector<size_t> counted_in(names.size(), std::numeric_limits<size_t>::max());
  for (size_t i = 0; i < stacks.size(); ++i) {
    const WeightedStack& stack = stacks.stacks()[i];
    profile.weight += stack.weight;
    if (stack.root_first.empty()) continue;
    self[stack.root_first.back()] += stack.weight;
    for (NameId id : stack.root_first) {
      if (counted_in[id] == i) continue;
      counted_in[id] = i;
      total[id] += stack.weight;
    }
  }
  constexpr size_t kAbsent = std::numeric_limits<size_t>::max();  // not in these stacks
  profile.rows.reserve(names.size() - static_cast<size_t>(std::count(counted_in.begin(),
                                                                     counted_in.end(), kAbsent)));
  for (NameId id = 0; id < names.size(); ++id) {
    if (counted_in[id] == kAbsent) continue;
    profile.rows.push_back({names.name(id), self[id], total[id],
                            percentOf(self[id], profile.weight),
                            percentOf(total[id], profile.weight)});
  }
  std::sort(profile.rows.begin(), profile.rows.end(), [](const auto& a, const auto& b) {
    if (a.self != b.self) return a.self > b.self;
    if (a.total != b.total) return a.total > b.total;
    return a.name < b.name;
  });
  return profile;
}

}  // namespace incise::analyzer
