#include "recorder/metadata/object_symbols.h"

#include <algorithm>
#include <vector>

#include "base/hex.h"
#include "objfile/elf_reader.h"
#include "objfile/fde_ranges.h"
#include "objfile/unwind_tables.h"
#include "recorder/metadata/elf_symbol_count.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kSystemDebugDir = "/usr/lib/debug";

// The process's root as a prefix of `hit.open_path` ("/proc/42/root"), or ""
// when the object is opened some other way (map_files, a kept descriptor).
std::string rootOf(const HitObject& hit) {
  const std::string& open = hit.open_path;
  if (hit.path.empty() || hit.path.front() != '/' || open.size() <= hit.path.size()) return {};
  if (open.compare(open.size() - hit.path.size(), hit.path.size(), hit.path) != 0) return {};
  std::string root = open.substr(0, open.size() - hit.path.size());
  return root.ends_with("/root") ? root : std::string();
}

std::string directoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// A debuglink is a bare file name; one with a slash could point anywhere.
bool isPlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// Debug files in the order gdb and perf look for them, each under the
// process's root and then under ours.
std::vector<std::string> debugFileCandidates(const HitObject& hit, const std::string& build_id,
                                             const std::string& debug_link) {
  std::vector<std::string> relative;
  if (build_id.size() >= 2) {
    const std::string hex = hexBytes(build_id);
    relative.push_back(std::string(kSystemDebugDir) + "/.build-id/" + hex.substr(0, 2) + "/" +
                       hex.substr(2) + ".debug");
  }
  if (isPlainFileName(debug_link) && !hit.path.empty() && hit.path.front() == '/') {
    const std::string directory = directoryOf(hit.path);
    relative.push_back(directory + "/" + debug_link);
    relative.push_back(directory + "/.debug/" + debug_link);
    relative.push_back(std::string(kSystemDebugDir) + directory + "/" + debug_link);
  }
  std::vector<std::string> candidates;
  const std::string root = rootOf(hit);
  for (const std::string& path : relative) {
    if (!root.empty()) candidates.push_back(root + path);
    candidates.push_back(path);
  }
  return candidates;
}

// The object's own file: through its process, else the same path here.
Result<objfile::ElfObject> readOwnFile(const HitObject& hit) {
  Result<objfile::ElfObject> read = objfile::readElf(hit.open_path);
  if (!read && !hit.path.empty() && hit.path.front() == '/') read = objfile::readElf(hit.path);
  return read;
}

// The first candidate that is an ELF file with a .symtab and, when both
// have one, the object's build-id (a debuglink name alone could name a file
// of another build).
std::optional<std::string> matchingDebugFile(const HitObject& hit, const std::string& build_id,
                                             const std::string& debug_link) {
  for (const std::string& candidate : debugFileCandidates(hit, build_id, debug_link)) {
    Result<ElfSymbolCount> count = countElfSymbols(candidate);
    if (!count || !count->full || count->symbols == 0) continue;
    if (!build_id.empty()) {
      Result<std::string> candidate_id = objfile::readBuildId(candidate);
      if (!candidate_id || *candidate_id != build_id) continue;
    }
    return candidate;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> findDebugFile(const HitObject& hit) {
  Result<objfile::ElfIdentity> own = objfile::readElfIdentity(hit.open_path);
  if (!own && !hit.path.empty() && hit.path.front() == '/')
    own = objfile::readElfIdentity(hit.path);
  const std::string build_id = own && !own->build_id.empty() ? own->build_id : hit.build_id;
  return matchingDebugFile(hit, build_id, own ? own->debug_link : std::string());
}

Result<format::ObjectSymbols> readObjectSymbols(const HitObject& hit) {
  Result<objfile::ElfObject> own = readOwnFile(hit);
  if (!own) return own.error().context("symbols of " + hit.path);
  format::ObjectSymbols object = std::move(own->object);
  if (object.build_id.empty()) object.build_id = hit.build_id;
  if (own->table != objfile::SymbolTableKind::kFull) {
    if (std::optional<std::string> debug =
            matchingDebugFile(hit, object.build_id, object.debug_link)) {
      // The debug file's symbols; the object keeps its own segments (a
      // debug file's are the same addresses with no bytes behind them).
      if (Result<objfile::ElfObject> symbols = objfile::readElf(*debug)) {
        object.symbols = std::move(symbols->object.symbols);
      }
    }
  }
  object.path = hit.path;
  return object;
}

bool embedsHitSubset(const HitObject& hit, size_t full_table_limit) {
  Result<ElfSymbolCount> count = countElfSymbols(hit.open_path);
  if (!count && !hit.path.empty() && hit.path.front() == '/') count = countElfSymbols(hit.path);
  if (!count) return false;
  if (count->full) return count->symbols > full_table_limit;
  if (std::optional<std::string> debug = findDebugFile(hit)) {
    Result<ElfSymbolCount> debug_count = countElfSymbols(*debug);
    return debug_count && debug_count->symbols > full_table_limit;
  }
  // A stripped object's .dynsym: its hits that no export names need their
  // FDE ranges, which only the subset carries.
  return true;
}

size_t keepHitSymbols(const HitObject& hit, format::ObjectSymbols& object,
                      std::span<const uint64_t> file_offsets) {
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
  std::sort(addresses.begin(), addresses.end());
  std::vector<format::Symbol>& symbols = object.symbols;
  std::sort(symbols.begin(), symbols.end(),
            [](const format::Symbol& a, const format::Symbol& b) { return a.address < b.address; });
  // For each address, what a lookup in the whole table finds: the symbols
  // starting at the nearest start at or below it (aliases included) when
  // they hold it, and for one without a size (it ends where the next
  // starts) the next ones too.
  std::vector<bool> keep(symbols.size(), false);
  auto keepStartingAt = [&](size_t first) {
    for (size_t i = first; i < symbols.size() && symbols[i].address == symbols[first].address; ++i)
      keep[i] = true;
  };
  std::vector<uint64_t> unnamed;
  for (uint64_t address : addresses) {
    auto after = std::upper_bound(
        symbols.begin(), symbols.end(), address,
        [](uint64_t a, const format::Symbol& symbol) { return a < symbol.address; });
    bool named = false;
    if (after != symbols.begin()) {
      const uint64_t start = (after - 1)->address;
      auto first = std::lower_bound(
          symbols.begin(), after, start,
          [](const format::Symbol& symbol, uint64_t a) { return symbol.address < a; });
      for (auto it = first; it != after; ++it) {
        named |= it->size == 0 || address - it->address < it->size;
      }
      if (named) {
        keepStartingAt(static_cast<size_t>(first - symbols.begin()));
        const bool unsized = std::any_of(first, after, [](const auto& s) { return s.size == 0; });
        if (unsized && after != symbols.end())
          keepStartingAt(static_cast<size_t>(after - symbols.begin()));
      }
    }
    if (!named) unnamed.push_back(address);
  }
  const size_t total = symbols.size();
  std::vector<format::Symbol> kept;
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(symbols[i]));
  }
  if (!unnamed.empty()) {
    Result<objfile::UnwindTables> tables = objfile::readUnwindTables(hit.open_path);
    if (!tables && !hit.path.empty() && hit.path.front() == '/')
      tables = objfile::readUnwindTables(hit.path);
    if (tables) {
      const std::vector<objfile::FunctionRange> ranges =
          objfile::readFdeRanges(tables->eh_frame.bytes, tables->eh_frame.vaddr);
      std::vector<objfile::FunctionRange> hit_ranges;
      for (uint64_t address : unnamed) {
        if (const objfile::FunctionRange* range = objfile::findFunctionRange(ranges, address))
          hit_ranges.push_back(*range);
      }
      std::sort(hit_ranges.begin(), hit_ranges.end(),
                [](const auto& a, const auto& b) { return a.start < b.start; });
      hit_ranges.erase(std::unique(hit_ranges.begin(), hit_ranges.end()), hit_ranges.end());
      // A symbol without a name: the analyzer groups by it and names it
      // from its start; older analyzers skip nameless symbols.
      for (const objfile::FunctionRange& range : hit_ranges)
        kept.push_back({range.start, range.end - range.start, std::string()});
    }
  }
  std::sort(kept.begin(), kept.end(),
            [](const format::Symbol& a, const format::Symbol& b) { return a.address < b.address; });
  symbols = std::move(kept);
  return total;
}

}  // namespace incise::recorder
