#include "analyzer/symbolize/symbol_table.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "analyzer/symbolize/demangle.h"

namespace incise::analyzer {
namespace {

size_t leadingUnderscores(std::string_view name) {
  return std::min(name.find_first_not_of('_'), name.size());
}

// Sorting key: by start, then the alias we want to keep first: sized, the
// largest, the fewest leading underscores, then the longest name, as perf
// chooses (__memmove_avx_unaligned_erms over __memcpy_avx_unaligned_erms,
// one function under two names), so both tools print the same name.
bool preferred(const SymbolTable::Entry& a, const SymbolTable::Entry& b) {
  auto key = [](const SymbolTable::Entry& e) {
    return std::make_tuple(e.start, e.size == 0, ~e.size, leadingUnderscores(e.name),
                           ~e.name.size());
  };
  if (key(a) != key(b)) return key(a) < key(b);
  return a.name < b.name;
}

uint64_t saturatingAdd(uint64_t a, uint64_t b) {
  return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

}  // namespace

SymbolTable::SymbolTable(std::vector<Entry> entries) {
  std::sort(entries.begin(), entries.end(), preferred);
  // Aliases: the preferred one sorts first at its start; the rest go, in place.
  entries.erase(std::unique(entries.begin(), entries.end(),
                            [](const Entry& a, const Entry& b) { return a.start == b.start; }),
                entries.end());
  entries_ = std::move(entries);
  starts_.reserve(entries_.size());
  ends_.reserve(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& entry = entries_[i];
    uint64_t end = saturatingAdd(entry.start, entry.size ? entry.size : kMaxUnsizedSymbol);
    if (i + 1 < entries_.size()) end = std::min(end, entries_[i + 1].start);
    starts_.push_back(entry.start);
    ends_.push_back(end);
  }
}

SymbolTable SymbolTable::fromObject(const std::vector<format::Symbol>& symbols) {
  std::vector<Entry> entries;
  entries.reserve(symbols.size());
  for (const format::Symbol& symbol : symbols) {
    if (!symbol.name.empty()) entries.push_back({symbol.address, symbol.size, symbol.name, {}});
  }
  return SymbolTable(std::move(entries));
}

SymbolTable SymbolTable::fromKernel(const std::vector<format::KernelSymbol>& symbols) {
  std::vector<Entry> entries;
  entries.reserve(symbols.size());
  for (const format::KernelSymbol& symbol : symbols) {
    if (!symbol.name.empty()) entries.push_back({symbol.address, 0, symbol.name, symbol.module});
  }
  return SymbolTable(std::move(entries));
}

std::optional<size_t> SymbolTable::find(uint64_t address) const {
  auto after = std::upper_bound(starts_.begin(), starts_.end(), address);
  if (after == starts_.begin()) return std::nullopt;
  const auto index = static_cast<size_t>(after - starts_.begin()) - 1;
  if (address >= ends_[index]) return std::nullopt;
  return index;
}

const std::string& SymbolTable::demangledName(size_t index) {
  auto [it, inserted] = demangled_.try_emplace(index);
  if (inserted) it->second = demangle(entries_[index].name);
  return it->second;
}

}  // namespace incise::analyzer
