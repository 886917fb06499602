#include "analyzer/render/folded_stacks.h"

#include "analyzer/render/terminal_text.h"

namespace incise::analyzer {

std::string FoldedStacks::cleanFrame(const std::string& name) {
  std::string clean;
  appendClean(clean, name);
  return clean;
}

void FoldedStacks::appendClean(std::string& joined, std::string_view name) {
  if (name.empty()) name = "[unknown]";
  size_t start = joined.size();
  if (isTerminalSafe(name)) {
    joined += name;
  } else {
    std::string lines_joined(name);
    for (char& c : lines_joined) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    appendTerminalText(joined, lines_joined);
  }
  for (size_t i = start; i < joined.size(); ++i) {
    if (joined[i] == ';') joined[i] = ':';
  }
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
  addPath(
      root_first, [](const std::string& name) -> std::string_view { return name; }, weight);
}

void FoldedStacks::add(std::span<const NameId> root_first, const NameTable& names, uint64_t weight,
                       std::string_view root) {
  addPath(
      root_first, [&](NameId id) -> std::string_view { return names.name(id); }, weight, root);
}

void FoldedStacks::write(std::ostream& out) const {
  for (const auto& [path, weight] : paths_) out << path << ' ' << weight << '\n';
}

}  // namespace incise::analyzer
