#include "recorder/probes/go_target_executables.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <utility>

namespace incise::recorder {
namespace {

bool isExecutableFile(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

// execvp's search: a name with a slash as it is, else each PATH entry.
std::string findProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (isExecutableFile(candidate)) return candidate;
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

bool parsePid(std::string_view text, uint32_t& pid) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), pid);
  return error == std::errc() && end == text.data() + text.size() && pid != 0;
}

// Every running process, from /proc.
void runningProcesses(std::vector<uint32_t>& pids) {
  DIR* proc = opendir("/proc");
  if (!proc) return;
  while (dirent* entry = readdir(proc)) {
    uint32_t pid = 0;
    if (pids.size() < kMaxScannedProcesses && parsePid(entry->d_name, pid)) pids.push_back(pid);
  }
  closedir(proc);
}

// The processes of cgroup directory `dir` and of the cgroups below it.
void cgroupProcesses(const std::string& dir, int depth, std::vector<uint32_t>& pids) {
  // cgroup trees are shallow; the bound keeps a bind-mount loop finite.
  constexpr int kMaxDepth = 32;
  if (depth > kMaxDepth) return;
  std::ifstream procs(dir + "/cgroup.procs");
  for (std::string line; std::getline(procs, line) && pids.size() < kMaxScannedProcesses;) {
    uint32_t pid = 0;
    if (parsePid(line, pid)) pids.push_back(pid);
  }
  DIR* children = opendir(dir.c_str());
  if (!children) return;
  while (dirent* entry = readdir(children)) {
    std::string name = entry->d_name;
    if (entry->d_type == DT_DIR && name != "." && name != "..")
      cgroupProcesses(dir + "/" + name, depth + 1, pids);
  }
  closedir(children);
}

// One entry per executable file the processes run; a process whose
// executable cannot be read (a kernel thread, one that exited) is left out.
std::vector<TargetExecutable> byExecutable(const std::vector<uint32_t>& pids) {
  std::map<std::pair<dev_t, ino_t>, TargetExecutable> files;
  for (uint32_t pid : pids) {
    std::string exe = "/proc/" + std::to_string(pid) + "/exe";
    struct stat info {};
    if (stat(exe.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    TargetExecutable& target = files[{info.st_dev, info.st_ino}];
    if (target.path.empty()) target.path = exe;
    target.pids.push_back(pid);
  }
  std::vector<TargetExecutable> targets;
  for (auto& [file, target] : files) targets.push_back(std::move(target));
  return targets;
}

}  // namespace

std::vector<TargetExecutable> targetExecutables(const RecordConfig& config) {
  std::vector<TargetExecutable> targets;
  std::vector<uint32_t> pids;
  switch (config.target_kind) {
    case TargetKind::kCommand:
      if (!config.command.empty()) {
        std::string program = findProgram(config.command.front());
        if (!program.empty()) targets.push_back({.path = program, .pid = -1});
      }
      break;
    case TargetKind::kPids:
      for (uint32_t pid : config.pids)
        targets.push_back({.path = "/proc/" + std::to_string(pid) + "/exe",
                           .pid = static_cast<int>(pid),
                           .pids = {pid}});
      break;
    case TargetKind::kAll:
      runningProcesses(pids);
      targets = byExecutable(pids);
      break;
    case TargetKind::kCgroup:
      cgroupProcesses(config.cgroup_path, 0, pids);
      targets = byExecutable(pids);
      break;
  }
  return targets;
}

bool targetExited(const TargetExecutable& target) {
  if (target.pids.empty()) return false;
  for (uint32_t pid : target.pids) {
    if (access(("/proc/" + std::to_string(pid)).c_str(), F_OK) == 0) return false;
  }
  return true;
}

}  // namespace incise::recorder
