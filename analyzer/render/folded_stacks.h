// FoldedStacks: weighted call paths in Brendan Gregg's folded format.
//
// One line per distinct path, root first, frames joined by ';', then a space
// and the weight: "main;parse;memcpy 42". Lines are sorted, as
// stackcollapse-*.pl writes them, so output is stable and diffable. Frame
// names are cleaned so the format stays parseable: ';' becomes ':' and line
// breaks become spaces. The flame graph is drawn from the same object.
//
//   FoldedStacks folded;
//   folded.add({"main", "parse", "memcpy"}, 42);
//   folded.write(std::cout);   // main;parse;memcpy 42
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace incise::analyzer {

class FoldedStacks {
 public:
  // Paths with zero weight or no frames are ignored.
  void add(const std::vector<std::string>& root_first, uint64_t weight);
  void write(std::ostream& out) const;
  uint64_t total() const { return total_; }
  // Joined path -> weight, sorted by path.
  const std::map<std::string, uint64_t>& paths() const { return paths_; }

  static std::string cleanFrame(const std::string& name);
  static std::vector<std::string> split(const std::string& joined);

 private:
  std::map<std::string, uint64_t> paths_;
  uint64_t total_ = 0;
};

}  // namespace incise::analyzer
