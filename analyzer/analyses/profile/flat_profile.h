// Flat profile (what `incise top` prints): per frame name, self and total.
//
// self  = weight of stacks whose leaf is the name;
// total = weight of stacks that contain the name anywhere, counted once per
//         stack even when the name appears several times (recursion).
// Percentages are of the total weight. Rows are sorted by self, then total
// (both descending), then name.
//
//   FlatProfile profile = computeFlatProfile(weights.named(namer));
//   profile.rows[0].name, profile.rows[0].self_percent
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/analyses/profile/stack_weights.h"

namespace incise::analyzer {

struct FlatProfileRow {
  std::string name;
  uint64_t self = 0;
  uint64_t total = 0;
  double self_percent = 0;
  double total_percent = 0;
};

struct FlatProfile {
  uint64_t weight = 0;  // of all stacks
  std::vector<FlatProfileRow> rows;
};

// Tallies by name id; text is copied once per row.
FlatProfile computeFlatProfile(const NamedStacks& stacks);

}  // namespace incise::analyzer
