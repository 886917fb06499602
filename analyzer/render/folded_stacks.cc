#include "analyzer/render/folded_stacks.h"

namespace incise::analyzer {

std::string FoldedStacks::cleanFrame(const std::string& name) {
  std::string clean = name.empty() ? "[unknown]" : name;
  for (char& c : clean) {
    if (c == ';') c = ':';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return clean;
}

std::vector<std::string> FoldedStacks::split(const std::string& joined) {
  std::vector<std::string> frames;
  size_t start = 0;
  for (;;) {
    size_t semicolon = joined.find(';', start);
    frames.push_back(joined.substr(start, semicolon - start));
    if (semicolon == std::string::npos) break;
    start = semicolon + 1;
  }
  return frames;
}

void FoldedStacks::add(const std::vector<std::string>& root_first, uint64_t weight) {
  if (weight == 0 || root_first.empty()) return;
  std::string joined;
  for (const auto& frame : root_first) {
    if (!joined.empty()) joined += ';';
    joined += cleanFrame(frame);
  }
  paths_[joined] += weight;
  total_ += weight;
}

void FoldedStacks::write(std::ostream& out) const {
  for (const auto& [path, weight] : paths_) out << path << ' ' << weight << '\n';
}

}  // namespace incise::analyzer
