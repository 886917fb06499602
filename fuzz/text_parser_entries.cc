// Fuzz entries for the line parsers of /proc/kallsyms and JIT perf maps.
#include <string_view>

#include "fuzz/fuzz_entries.h"
#include "objfile/kallsyms.h"
#include "objfile/perf_map.h"

namespace incise::fuzz {
namespace {

std::string_view asText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace

int fuzzPerfMap(const uint8_t* data, size_t size) {
  objfile::TextParseCounts counts;
  auto entries = objfile::parsePerfMap(asText(data, size), &counts);
  // Every entry must be one the parser's own rules allow.
  for (const auto& e : entries) {
    if (e.size == 0 || e.name.empty() || e.start + e.size < e.start) __builtin_trap();
  }
  if (entries.size() + counts.malformed + counts.ignored != counts.lines) __builtin_trap();
  return 0;
}

int fuzzKallsyms(const uint8_t* data, size_t size) {
  objfile::TextParseCounts counts;
  auto symbols = objfile::parseKallsyms(asText(data, size), &counts);
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (symbols[i].address == 0 || symbols[i].name.empty()) __builtin_trap();
    if (i > 0 && symbols[i - 1].address > symbols[i].address) __builtin_trap();
  }
  if (symbols.size() + counts.malformed + counts.ignored != counts.lines) __builtin_trap();
  return 0;
}

}  // namespace incise::fuzz
