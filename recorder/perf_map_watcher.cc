#include "recorder/perf_map_watcher.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "objfile/perf_map.h"

namespace incise::recorder {

std::string PerfMapWatcher::mapPathOf(uint32_t pid) const {
  std::string dir = proc_root_ + "/" + std::to_string(pid);
  // NSpid lists the pid in each nested namespace; the last is the process's own.
  std::ifstream status(dir + "/status");
  std::string line;
  std::string own_pid = std::to_string(pid);
  while (std::getline(status, line)) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    std::string field;
    while (fields >> field) own_pid = field;
    break;
  }
  return dir + "/root/tmp/perf-" + own_pid + ".map";
}

void PerfMapWatcher::poll(const std::vector<uint32_t>& pids, uint64_t time,
                          std::vector<format::PerfMapSnapshot>& out) {
  // Positions of processes no longer listed (they exited) are dropped.
  std::erase_if(consumed_bytes_, [&](const auto& entry) {
    return !std::binary_search(pids.begin(), pids.end(), entry.first);
  });
  for (uint32_t pid : pids) {
    std::ifstream in(mapPathOf(pid), std::ios::binary);
    if (!in) continue;
    uint64_t& consumed = consumed_bytes_[pid];
    in.seekg(static_cast<std::streamoff>(consumed));
    std::ostringstream text;
    text << in.rdbuf();
    std::string fresh = text.str();
    // Only whole lines: the JIT may be in the middle of writing the last one.
    size_t end = fresh.rfind('\n');
    if (end == std::string::npos) continue;
    fresh.resize(end + 1);
    consumed += fresh.size();
    std::vector<format::PerfMapEntry> entries = objfile::parsePerfMap(fresh);
    if (entries.empty()) continue;
    entries_seen_ += entries.size();
    out.push_back(format::PerfMapSnapshot{.pid = pid, .time = time, .entries = std::move(entries)});
  }
}

}  // namespace incise::recorder
