#include "recorder/symbol_collector.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <unordered_set>

#include "objfile/kallsyms.h"

namespace incise::recorder {

namespace {

constexpr size_t kSliceBytes = 1u << 20;

// Start addresses of the covering symbols and of their successors.
// `starts` is sorted and unique.
std::unordered_set<uint64_t> coveringStarts(const std::vector<uint64_t>& starts,
                                            const std::set<uint64_t>& addresses) {
  std::unordered_set<uint64_t> wanted;
  for (uint64_t address : addresses) {
    auto it = std::upper_bound(starts.begin(), starts.end(), address);
    if (it == starts.begin()) continue;
    wanted.insert(*(it - 1));
    if (it != starts.end()) wanted.insert(*it);
  }
  return wanted;
}

// Calls `visit` with the symbols of each slice of whole lines of the file.
void forEachSlice(const std::string& path,
                  const std::function<void(std::vector<format::KernelSymbol>&&)>& visit) {
  std::ifstream in(path, std::ios::binary);
  std::string slice;
  std::string carry;
  std::vector<char> buffer(kSliceBytes);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    size_t got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    slice = std::move(carry);
    slice.append(buffer.data(), got);
    size_t end = slice.rfind('\n');
    if (end == std::string::npos) {
      carry = std::move(slice);
      continue;
    }
    carry = slice.substr(end + 1);
    slice.resize(end + 1);
    visit(objfile::parseKallsyms(slice));
  }
  if (!carry.empty()) visit(objfile::parseKallsyms(carry));
}

}  // namespace

std::vector<format::KernelSymbol> kernelSymbolsCovering(
    const std::vector<format::KernelSymbol>& sorted, const std::set<uint64_t>& addresses) {
  std::vector<uint64_t> starts;
  starts.reserve(sorted.size());
  for (const auto& symbol : sorted) starts.push_back(symbol.address);
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::unordered_set<uint64_t> wanted = coveringStarts(starts, addresses);
  std::vector<format::KernelSymbol> out;
  for (const auto& symbol : sorted) {
    if (wanted.erase(symbol.address)) out.push_back(symbol);
  }
  return out;
}

std::vector<format::KernelSymbol> kernelSymbolsCoveringFile(const std::string& kallsyms_path,
                                                            const std::set<uint64_t>& addresses) {
  std::vector<uint64_t> starts;
  forEachSlice(kallsyms_path, [&](std::vector<format::KernelSymbol>&& symbols) {
    for (const auto& symbol : symbols) starts.push_back(symbol.address);
  });
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::unordered_set<uint64_t> wanted = coveringStarts(starts, addresses);
  starts = {};
  std::vector<format::KernelSymbol> out;
  forEachSlice(kallsyms_path, [&](std::vector<format::KernelSymbol>&& symbols) {
    for (auto& symbol : symbols) {
      if (wanted.erase(symbol.address)) out.push_back(std::move(symbol));
    }
  });
  std::sort(out.begin(), out.end(),
            [](const format::KernelSymbol& a, const format::KernelSymbol& b) {
              return a.address < b.address;
            });
  return out;
}

format::MetadataDelta collectSymbols(const ProcessTracker& tracker, uint64_t time,
                                     const std::string& kallsyms_path,
                                     std::vector<std::string>* problems) {
  format::MetadataDelta delta;
  delta.time = time;
  if (!tracker.hitKernelAddresses().empty()) {
    delta.kernel_symbols = kernelSymbolsCoveringFile(kallsyms_path, tracker.hitKernelAddresses());
    if (delta.kernel_symbols.empty() && problems)
      problems->push_back("no kernel symbols in " + kallsyms_path +
                          " (kptr_restrict? run as root)");
  }
  return delta;
}

}  // namespace incise::recorder
