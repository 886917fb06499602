// Line-oriented parsing shared by the kallsyms and perf-map parsers: walking
// lines, splitting off whitespace-separated fields and reading hex numbers,
// all on string_views so hostile text can cost time but never memory safety.
//
//   objfile::TextParseCounts counts;
//   auto symbols = objfile::parseKallsyms(text, &counts);
//   if (counts.malformed) warn(counts.malformed, "malformed kallsyms lines skipped");
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace incise::objfile {

struct TextParseCounts {
  size_t lines = 0;      // non-empty lines seen
  size_t malformed = 0;  // lines that did not parse, skipped
  size_t ignored = 0;    // lines that parsed but carry nothing useful, skipped
};

// Calls `visit(line)` for each line without its "\n" or "\r\n"; blank lines
// are not visited.
template <typename Visit>
void forEachLine(std::string_view text, Visit&& visit) {
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) visit(line);
  }
}

inline bool isBlank(char c) {
  return c == ' ' || c == '\t';
}

inline std::string_view trimBlanks(std::string_view text) {
  while (!text.empty() && isBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && isBlank(text.back())) text.remove_suffix(1);
  return text;
}

// Removes and returns the first blank-separated field of `text` (leading
// blanks skipped); empty when none is left.
inline std::string_view takeField(std::string_view& text) {
  text = trimBlanks(text);
  size_t end = 0;
  while (end < text.size() && !isBlank(text[end])) ++end;
  const std::string_view field = text.substr(0, end);
  text.remove_prefix(end);
  return field;
}

}  // namespace incise::objfile
