#include "objfile/kallsyms.h"

#include <algorithm>
#include <string>

#include "base/hex.h"

namespace incise::objfile {

void forEachKallsymsTextSymbol(std::string_view text, TextParseCounts* counts,
                               const std::function<void(uint64_t address, std::string_view name,
                                                        std::string_view module)>& visit) {
  TextParseCounts local;
  TextParseCounts& tally = counts ? *counts : local;
  forEachLine(text, [&](std::string_view line) {
    ++tally.lines;
    const std::optional<uint64_t> address = parseHex(takeField(line));
    const std::string_view type = takeField(line);
    const std::string_view name = takeField(line);
    std::string_view module = takeField(line);
    const bool module_ok =
        module.empty() || (module.size() > 2 && module.front() == '[' && module.back() == ']');
    if (!address || type.size() != 1 || name.empty() || !module_ok || !takeField(line).empty()) {
      ++tally.malformed;
      return;
    }
    const bool is_text = std::string_view("tTwW").find(type[0]) != std::string_view::npos;
    if (!is_text || *address == 0) {
      ++tally.ignored;
      return;
    }
    if (!module.empty()) module = module.substr(1, module.size() - 2);
    visit(*address, name, module);
  });
}

std::vector<format::KernelSymbol> parseKallsyms(std::string_view text, TextParseCounts* counts) {
  std::vector<format::KernelSymbol> symbols;
  forEachKallsymsTextSymbol(text, counts,
                            [&](uint64_t address, std::string_view name, std::string_view module) {
                              symbols.push_back({address, std::string(name), std::string(module)});
                            });
  std::stable_sort(symbols.begin(), symbols.end(),
                   [](const format::KernelSymbol& a, const format::KernelSymbol& b) {
                     return a.address < b.address;
                   });
  return symbols;
}

}  // namespace incise::objfile
