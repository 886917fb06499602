// NameTable: every distinct printed frame name stored once and numbered
// densely from 0.
//
// Reports over millions of stacks carry frames as 4-byte ids and turn them
// back into text only when they print, so memory grows with distinct names,
// not with frames x stacks. Ids are dense, so per-name tallies are plain
// vectors indexed by id. Header-only so render/ can print ids without
// linking the trace model.
//
//   NameTable names;
//   NameId main = names.intern("main");
//   names.intern("main") == main;  names.name(main) == "main";
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/symbolize/dense_id_index.h"

namespace incise::analyzer {

using NameId = uint32_t;

class NameTable {
 public:
  NameId intern(std::string_view name) {
    auto [id, inserted] =
        ids_.findOrInsert(std::hash<std::string_view>()(name), static_cast<NameId>(names_.size()),
                          [&](NameId known) { return names_[known] == name; });
    if (inserted) names_.emplace_back(name);
    return id;
  }
  const std::string& name(NameId id) const { return names_[id]; }
  size_t size() const { return names_.size(); }
  std::vector<std::string> names(std::span<const NameId> ids) const {
    std::vector<std::string> text;
    text.reserve(ids.size());
    for (NameId id : ids) text.push_back(names_[id]);
    return text;
  }
  // Orders paths as their names would order, for stable printed ties.
  bool namesLess(std::span<const NameId> a, std::span<const NameId> b) const {
    return std::lexicographical_compare(
        a.begin(), a.end(), b.begin(), b.end(),
        [&](NameId x, NameId y) { return x != y && names_[x] < names_[y]; });
  }

 private:
  // A deque never moves its elements: name() references stay valid.
  std::deque<std::string> names_;
  DenseIdIndex ids_;
};

}  // namespace incise::analyzer
