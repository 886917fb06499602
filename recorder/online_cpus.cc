#include "recorder/online_cpus.h"

#include <charconv>
#include <fstream>
#include <string>

namespace incise::recorder {
namespace {

bool parseInt(std::string_view text, int& value) {
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value >= 0;
}

}  // namespace

Result<std::vector<int>> parseCpuList(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::vector<int> cpus;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view range = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t dash = range.find('-');
    int first = 0, last = 0;
    bool ok = dash == std::string_view::npos ? parseInt(range, first) && parseInt(range, last)
                                             : parseInt(range.substr(0, dash), first) &&
                                                   parseInt(range.substr(dash + 1), last);
    if (!ok || last < first || last - first > 65535)
      return Error("bad cpu list entry '" + std::string(range) + "'");
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  if (cpus.empty()) return Error("empty cpu list");
  return cpus;
}

Result<std::vector<int>> onlineCpus() {
  const std::string path = "/sys/devices/system/cpu/online";
  std::ifstream in(path);
  std::string list;
  if (!std::getline(in, list)) return Error("cannot read " + path);
  Result<std::vector<int>> cpus = parseCpuList(list);
  if (!cpus) return cpus.error().context(path);
  return cpus;
}

}  // namespace incise::recorder
