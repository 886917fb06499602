// NameTable: every distinct printed frame name kept once and numbered
// densely from 0 — copied, or, with internKept, referenced where it already
// lives (a symbolizer frame's name).
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
//   NameId leaf = names.internKept(frame.name);   // no copy: frame outlives names
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/symbolize/dense_id_index.h"

namespace incise::analyzer {

using NameId = uint32_t;

class NameTable {
 public:
  NameId intern(std::string_view name) {
    auto [id, inserted] = find(name);
    if (inserted) by_id_.push_back(&owned_.emplace_back(name));
    return id;
  }
  // The same without a copy: `name` must stay alive and unchanged as long as
  // the table (a symbolizer Frame's name: frames outlive the namer).
  NameId internKept(const std::string& name) {
    auto [id, inserted] = find(name);
    if (inserted) by_id_.push_back(&name);
    return id;
  }
  const std::string& name(NameId id) const { return *by_id_[id]; }
  size_t size() const { return by_id_.size(); }
  std::vector<std::string> names(std::span<const NameId> ids) const {
    std::vector<std::string> text;
    text.reserve(ids.size());
    for (NameId id : ids) text.push_back(name(id));
    return text;
  }
  // Orders paths as their names would order, for stable printed ties.
  bool namesLess(std::span<const NameId> a, std::span<const NameId> b) const {
    return std::lexicographical_compare(
        a.begin(), a.end(), b.begin(), b.end(),
        [&](NameId x, NameId y) { return x != y && name(x) < name(y); });
  }

 private:
  std::pair<NameId, bool> find(std::string_view name) {
    return ids_.findOrInsert(std::hash<std::string_view>()(name),
                             static_cast<NameId>(by_id_.size()),
                             [&](NameId known) { return *by_id_[known] == name; });
  }

  std::vector<const std::string*> by_id_;
  // Copies made by intern(); a deque never moves its elements.
  std::deque<std::string> owned_;
  DenseIdIndex ids_;
};

}  // namespace incise::analyzer
