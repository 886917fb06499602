#include "analyzer/reports/flat_profile.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "analyzer/render/table.h"

namespace incise::analyzer {

FlatProfile computeFlatProfile(const std::vector<WeightedStack>& stacks) {
  FlatProfile profile;
  // Names live in `stacks` for the whole call: key by view, copy once per row.
  std::unordered_map<std::string_view, FlatProfileRow> by_name;
  std::unordered_set<std::string_view> seen;
  for (const auto& stack : stacks) {
    profile.weight += stack.weight;
    if (stack.root_first.empty()) continue;
    by_name[stack.root_first.back()].self += stack.weight;
    seen.clear();
    for (const auto& name : stack.root_first) {
      if (seen.insert(name).second) by_name[name].total += stack.weight;
    }
  }
  profile.rows.reserve(by_name.size());
  for (auto& [name, row] : by_name) {
    row.name = std::string(name);
    row.self_percent = percentOf(row.self, profile.weight);
    row.total_percent = percentOf(row.total, profile.weight);
    profile.rows.push_back(std::move(row));
  }
  std::sort(profile.rows.begin(), profile.rows.end(), [](const auto& a, const auto& b) {
    if (a.self != b.self) return a.self > b.self;
    if (a.total != b.total) return a.total > b.total;
    return a.name < b.name;
  });
  return profile;
}

}  // namespace incise::analyzer
