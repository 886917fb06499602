// SymbolTable: address -> symbol by one binary search over sorted,
// non-overlapping ranges, with each name demangled once, on first use.
//
// Built from an object's symbols (ELF addresses, sizes) or from kernel
// symbols (starts only). A symbol without a size ends where the next one
// starts, and at most kMaxUnsizedSymbol past its start, so an address far
// beyond the last known symbol is a miss rather than a wrong name. Aliases
// (several names at one address) collapse to one, preferring a sized symbol,
// then the name with fewer leading underscores ("malloc" over
// "__libc_malloc"), then the longer name, as perf does. A range nested in a
// larger one wins inside itself.
//
// Names are not copied: the table points into the symbols it was built from,
// which must outlive it (the trace's metadata, or the debug file's symbols
// the Symbolizer keeps). Only names a lookup hits are ever demangled.
//
//   SymbolTable table = SymbolTable::fromObject(object.symbols);
//   if (std::optional<size_t> hit = table.find(vaddr))
//     print(table.demangledName(*hit), vaddr - table.start(*hit));
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/metadata.h"

namespace incise::analyzer {

class SymbolTable {
 public:
  static constexpr uint64_t kMaxUnsizedSymbol = 1 << 20;

  struct Entry {
    uint64_t start = 0;
    uint64_t size = 0;        // 0: unknown, ends at the next start
    std::string_view name;    // points into the symbols the table was built from
    std::string_view module;  // kernel module, "" otherwise
  };

  SymbolTable() = default;
  explicit SymbolTable(std::vector<Entry> entries);
  static SymbolTable fromObject(const std::vector<format::Symbol>& symbols);
  static SymbolTable fromKernel(const std::vector<format::KernelSymbol>& symbols);

  std::optional<size_t> find(uint64_t address) const;
  size_t size() const { return starts_.size(); }
  bool empty() const { return starts_.empty(); }

  uint64_t start(size_t index) const { return starts_[index]; }
  std::string_view mangledName(size_t index) const { return entries_[index].name; }
  std::string_view module(size_t index) const { return entries_[index].module; }
  const std::string& demangledName(size_t index);

 private:
  std::vector<uint64_t> starts_;  // sorted, distinct: the binary search runs over this alone
  std::vector<uint64_t> ends_;
  std::vector<Entry> entries_;
  // By entry index; a hash map, as a report touches a few hundred of a
  // table's thousands of symbols.
  std::unordered_map<size_t, std::string> demangled_;
};

}  // namespace incise::analyzer
