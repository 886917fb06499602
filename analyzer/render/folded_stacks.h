// FoldedStacks: weighted call paths in Brendan Gregg's folded format.
//
// One line per distinct path, root first, frames joined by ';', then a space
// and the weight: "main;parse;memcpy 42". Lines are sorted, as
// stackcollapse-*.pl writes them, so output is stable and diffable. Frame
// names are cleaned so the format stays parseable: ';' becomes ':' and line
// breaks become spaces, other control bytes are escaped (terminal_text.h),
// so folded text is as safe to print as a table. The flame graph is drawn from the same object.
// Paths given as name ids are joined straight from the NameTable, so the
// text exists once per distinct path.
//
//   FoldedStacks folded;
//   folded.add({"main", "parse", "memcpy"}, 42);
//   folded.add(stack.root_first, names, stack.weight);   // ids into `names`
//   folded.add(stack.root_first, names, stack.weight, "req=42");   // under a root frame
//   folded.write(std::cout);   // main;parse;memcpy 42
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/model/name_table.h"

namespace incise::analyzer {

class FoldedStacks {
 public:
  // Paths with zero weight or no frames are ignored.
  void add(const std::vector<std::string>& root_first, uint64_t weight);
  // A non-empty `root` is one more frame above the path's root (a group:
  // the context value its events held).
  void add(std::span<const NameId> root_first, const NameTable& names, uint64_t weight,
           std::string_view root = {});
  void write(std::ostream& out) const;
  uint64_t total() const { return total_; }
  // Joined path -> weight, sorted by path.
  const std::map<std::string, uint64_t>& paths() const { return paths_; }

  static std::string cleanFrame(const std::string& name);
  static std::vector<std::string> split(const std::string& joined);

 private:
  static void appendClean(std::string& joined, std::string_view name);
  template <typename Frames, typename NameOf>
  void addPath(const Frames& root_first, NameOf name_of, uint64_t weight,
               std::string_view root = {}) {
    if (weight == 0 || root_first.empty()) return;
    std::string joined;
    if (!root.empty()) appendClean(joined, root);
    for (const auto& frame : root_first) {
      if (!joined.empty()) joined += ';';
      appendClean(joined, name_of(frame));
    }
    paths_[std::move(joined)] += weight;
    total_ += weight;
  }

  std::map<std::string, uint64_t> paths_;
  uint64_t total_ = 0;
};

}  // namespace incise::analyzer
