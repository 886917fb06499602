#include "recorder/object_symbols.h"

#include <algorithm>
#include <vector>

#include "objfile/elf_reader.h"
#include "recorder/elf_symbol_count.h"

namespace incise::recorder {

Result<format::ObjectSymbols> readObjectSymbols(const HitObject& hit) {
  Result<format::ObjectSymbols> object = objfile::readElfObject(hit.open_path);
  // The same file seen from our own mount namespace, if the process is gone.
  if (!object && hit.path.rfind('/', 0) == 0) object = objfile::readElfObject(hit.path);
  if (!object) return object.error().context("symbols of " + hit.path);
  object->path = hit.path;
  if (object->build_id.empty()) object->build_id = hit.build_id;
  return object;
}

bool embedsHitSubset(const HitObject& hit, size_t full_table_limit) {
  Result<size_t> count = countElfSymbols(hit.open_path);
  return count && *count > full_table_limit;
}

size_t keepHitSymbols(format::ObjectSymbols& object,
                      const std::unordered_set<uint64_t>& file_offsets) {
  // File offsets of the frames -> the ELF addresses the symbols use.
  std::vector<uint64_t> addresses;
  for (uint64_t offset : file_offsets) {
    for (const format::Segment& segment : object.segments) {
      if (offset >= segment.file_offset && offset - segment.file_offset < segment.file_size) {
        addresses.push_back(segment.vaddr + (offset - segment.file_offset));
        break;
      }
    }
  }
  // Keep, for each address, the last symbol starting at or below it (the one
  // containing it, or the nearest exported one before a hidden function):
  // what a lookup in the whole table would have found.
  std::vector<format::Symbol>& symbols = object.symbols;
  std::sort(symbols.begin(), symbols.end(),
            [](const format::Symbol& a, const format::Symbol& b) { return a.address < b.address; });
  std::vector<bool> keep(symbols.size(), false);
  for (uint64_t address : addresses) {
    auto after = std::upper_bound(
        symbols.begin(), symbols.end(), address,
        [](uint64_t a, const format::Symbol& symbol) { return a < symbol.address; });
    if (after != symbols.begin()) keep[static_cast<size_t>(after - symbols.begin()) - 1] = true;
  }
  const size_t total = symbols.size();
  std::vector<format::Symbol> kept;
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(symbols[i]));
  }
  symbols = std::move(kept);
  return total;
}

}  // namespace incise::recorder
