#include "recorder/metadata/symbol_collector.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <unordered_set>

#include "base/unique_fd.h"
#include "objfile/kallsyms.h"

namespace incise::recorder {

namespace {

// /proc/kallsyms is ~5 MB with modules; a file past this is not kallsyms.
constexpr size_t kMaxKallsymsBytes = 256u << 20;

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

// The file's text (a /proc file has no size to ask for), whole lines of at
// most kMaxKallsymsBytes; empty when unreadable.
std::string readWholeLines(const std::string& path) {
  std::string text;
  const UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return text;
  // A /proc read returns a page or so at a time: grow by doubling, never
  // per read.
  size_t held = 0;
  text.resize(1u << 20);
  while (held < kMaxKallsymsBytes) {
    if (held == text.size()) text.resize(std::min(text.size() * 2, kMaxKallsymsBytes));
    ssize_t got = read(fd.get(), text.data() + held, text.size() - held);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    held += static_cast<size_t>(got);
  }
  text.resize(held);
  if (held == kMaxKallsymsBytes) {  // cut off: its last line may be a part
    const size_t end = text.rfind('\n');
    text.resize(end == std::string::npos ? 0 : end + 1);
  }
  return text;
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
  // One read (the kernel formats every line anew for each reader) and one
  // scan; names stay views into the text until a symbol is kept.
  const std::string text = readWholeLines(kallsyms_path);
  struct Line {
    uint64_t address;
    std::string_view name, module;
  };
  std::vector<Line> lines;
  objfile::forEachKallsymsTextSymbol(
      text, nullptr, [&](uint64_t address, std::string_view name, std::string_view module) {
        lines.push_back({address, name, module});
      });
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.address < b.address; });
  std::vector<uint64_t> starts;
  starts.reserve(lines.size());
  for (const Line& line : lines) starts.push_back(line.address);
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::unordered_set<uint64_t> wanted = coveringStarts(starts, addresses);
  std::vector<format::KernelSymbol> out;
  for (const Line& line : lines) {
    if (wanted.erase(line.address))
      out.push_back({line.address, std::string(line.name), std::string(line.module)});
  }
  return out;
}

format::MetadataDelta collectSymbols(const ProcessTracker& tracker, uint64_t time,
                                     const std::string& kallsyms_path,
                                     std::vector<std::string>* problems) {
  format::MetadataDelta delta;
  delta.time = time;
  if (!tracker.symbols().hitKernelAddresses().empty()) {
    delta.kernel_symbols =
        kernelSymbolsCoveringFile(kallsyms_path, tracker.symbols().hitKernelAddresses());
    if (delta.kernel_symbols.empty() && problems)
      problems->push_back("no kernel symbols in " + kallsyms_path +
                          " (kptr_restrict? run as root)");
  }
  return delta;
}

}  // namespace incise::recorder
