#include "analyzer/reports/stack_text.h"

namespace incise::analyzer {

std::string stackLine(const std::vector<std::string>& root_first) {
  std::string line;
  for (auto it = root_first.rbegin(); it != root_first.rend(); ++it) {
    if (!line.empty()) line += " <- ";
    line += *it;
  }
  return line;
}

}  // namespace incise::analyzer
