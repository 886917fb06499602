#include "recorder/metadata/perf_map_watcher.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "base/unique_fd.h"
#include "objfile/perf_map.h"

namespace incise::recorder {
namespace {

// At most this much of one map is read per poll: a process that writes a huge
// file costs the recorder a bounded amount each second.
constexpr size_t kMaxBytesPerPoll = 16u << 20;

// The map is the target's own file, so it is opened inside the target's root
// (a link in it resolves there, never out into the recorder's files), without
// blocking (a FIFO would stall the recorder) and only when it is a regular
// file. Empty when there is no such file or it is not one to read.
UniqueFd openPerfMap(const std::string& root_dir, const std::string& inside) {
  const UniqueFd root(open(root_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) return UniqueFd();
  open_how how{};
  how.flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  UniqueFd fd(static_cast<int>(syscall(SYS_openat2, root.get(), inside.c_str(), &how, sizeof how)));
  if (!fd && (errno == ENOSYS || errno == EPERM)) {
    // Kernels before 5.6 lack openat2: the last component at least is no link.
    fd.reset(openat(root.get(), inside.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  }
  if (!fd) return UniqueFd();
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return UniqueFd();
  return fd;
}

// Up to `limit` bytes of `fd` from `offset`.
std::string readFrom(int fd, uint64_t offset, size_t limit) {
  std::string text;
  char buffer[65536];
  while (text.size() < limit) {
    const size_t want = std::min(sizeof buffer, limit - text.size());
    const ssize_t got = pread(fd, buffer, want, static_cast<off_t>(offset + text.size()));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  return text;
}

}  // namespace

std::string PerfMapWatcher::mapNameOf(uint32_t pid) const {
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
  return "tmp/perf-" + own_pid + ".map";
}

void PerfMapWatcher::poll(const std::vector<uint32_t>& pids, uint64_t time,
                          std::vector<format::PerfMapSnapshot>& out) {
  // Positions of processes no longer listed (they exited) are dropped.
  std::erase_if(consumed_bytes_, [&](const auto& entry) {
    return !std::binary_search(pids.begin(), pids.end(), entry.first);
  });
  for (uint32_t pid : pids) {
    const UniqueFd fd =
        openPerfMap(proc_root_ + "/" + std::to_string(pid) + "/root", mapNameOf(pid));
    if (!fd) continue;
    uint64_t& consumed = consumed_bytes_[pid];
    std::string fresh = readFrom(fd.get(), consumed, kMaxBytesPerPoll);
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
