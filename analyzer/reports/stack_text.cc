#include "analyzer/reports/stack_text.h"

#include "analyzer/render/terminal_text.h"

namespace incise::analyzer {
namespace {

// Escaped for the terminal: the line goes into sentences as well as tables.
template <typename Frames, typename NameOf>
std::string leafFirstLine(const Frames& root_first, NameOf name_of) {
  std::string line;
  for (auto it = root_first.rbegin(); it != root_first.rend(); ++it) {
    if (!line.empty()) line += " <- ";
    appendTerminalText(line, name_of(*it));
  }
  return line;
}

}  // namespace

std::string stackLine(const std::vector<std::string>& root_first) {
  return leafFirstLine(root_first,
                       [](const std::string& name) -> const std::string& { return name; });
}

std::string stackLine(std::span<const NameId> root_first, const NameTable& names) {
  return leafFirstLine(root_first, [&](NameId id) -> const std::string& { return names.name(id); });
}

}  // namespace incise::analyzer
