#include "recorder/symbol_collector.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "objfile/kallsyms.h"

namespace incise::recorder {

std::vector<format::KernelSymbol> kernelSymbolsCovering(
    const std::vector<format::KernelSymbol>& sorted, const std::set<uint64_t>& addresses) {
  std::set<size_t> wanted;
  for (uint64_t address : addresses) {
    auto it =
        std::upper_bound(sorted.begin(), sorted.end(), address,
                         [](uint64_t a, const format::KernelSymbol& s) { return a < s.address; });
    if (it == sorted.begin()) continue;
    size_t index = static_cast<size_t>(it - sorted.begin()) - 1;
    wanted.insert(index);
    if (index + 1 < sorted.size()) wanted.insert(index + 1);
  }
  std::vector<format::KernelSymbol> out;
  out.reserve(wanted.size());
  for (size_t index : wanted) out.push_back(sorted[index]);
  return out;
}

format::MetadataDelta collectSymbols(const ProcessTracker& tracker, uint64_t time,
                                     const std::string& kallsyms_path,
                                     std::vector<std::string>* problems) {
  format::MetadataDelta delta;
  delta.time = time;
  if (!tracker.hitKernelAddresses().empty()) {
    std::ifstream in(kallsyms_path);
    std::ostringstream text;
    text << in.rdbuf();
    std::vector<format::KernelSymbol> all = objfile::parseKallsyms(text.str());
    if (all.empty() && problems)
      problems->push_back("no kernel symbols in " + kallsyms_path +
                          " (kptr_restrict? run as root)");
    delta.kernel_symbols = kernelSymbolsCovering(all, tracker.hitKernelAddresses());
  }
  return delta;
}

}  // namespace incise::recorder
