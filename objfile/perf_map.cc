#include "objfile/perf_map.h"

#include <limits>
#include <string>

#include "base/hex.h"

namespace incise::objfile {

std::vector<format::PerfMapEntry> parsePerfMap(std::string_view text, TextParseCounts* counts) {
  TextParseCounts local;
  TextParseCounts& tally = counts ? *counts : local;
  std::vector<format::PerfMapEntry> entries;
  forEachLine(text, [&](std::string_view line) {
    ++tally.lines;
    const std::optional<uint64_t> start = parseHex(takeField(line));
    const std::optional<uint64_t> size = parseHex(takeField(line));
    const std::string_view name = trimBlanks(line);
    if (!start || !size || name.empty() || *size > std::numeric_limits<uint64_t>::max() - *start) {
      ++tally.malformed;
      return;
    }
    if (*size == 0) {
      ++tally.ignored;
      return;
    }
    entries.push_back({*start, *size, std::string(name)});
  });
  return entries;
}

}  // namespace incise::objfile
