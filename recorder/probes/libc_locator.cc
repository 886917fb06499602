#include "recorder/probes/libc_locator.h"

#include <fstream>
#include <sstream>

namespace incise::recorder {
namespace {

// "libc.so.6", "libc-2.31.so", "libc.musl-x86_64.so.1"; not "libcap.so.2".
bool isLibcName(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name.starts_with("libc.so") || name.starts_with("libc-") || name.starts_with("libc.musl");
}

}  // namespace

Result<std::string> findLibcInMaps(std::string_view maps_text) {
  // start-end perms offset dev inode path
  size_t line_start = 0;
  while (line_start < maps_text.size()) {
    size_t line_end = maps_text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = maps_text.size();
    std::string_view line = maps_text.substr(line_start, line_end - line_start);
    line_start = line_end + 1;

    std::istringstream fields{std::string(line)};
    std::string range, perms, offset, device, inode, path;
    if (!(fields >> range >> perms >> offset >> device >> inode >> path)) continue;
    if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path[0] != '/') continue;
    if (isLibcName(path)) return path;
  }
  return Error("no libc mapped (a static binary?)");
}

Result<std::string> libcOfProcess(uint32_t pid, const std::string& proc_root) {
  std::string dir = proc_root + "/" + std::to_string(pid);
  std::ifstream maps(dir + "/maps");
  if (!maps) return Error("pid " + std::to_string(pid) + ": cannot read " + dir + "/maps");
  std::stringstream text;
  text << maps.rdbuf();
  Result<std::string> path = findLibcInMaps(text.str());
  if (!path) return path.error().context("pid " + std::to_string(pid));
  return dir + "/root" + *path;
}

}  // namespace incise::recorder
