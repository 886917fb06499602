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

std::optional<std::string> findExecutableInMaps(
    std::string_view maps_text, const std::function<bool(std::string_view path)>& matches) {
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
    if (matches(path)) return path;
  }
  return std::nullopt;
}

Result<std::string> findLibcInMaps(std::string_view maps_text) {
  std::optional<std::string> path = findExecutableInMaps(maps_text, isLibcName);
  if (!path) return Error("no libc mapped (a static binary?)");
  return *path;
}

Result<std::string> readProcessMaps(uint32_t pid, const std::string& proc_root) {
  std::string path = proc_root + "/" + std::to_string(pid) + "/maps";
  std::ifstream maps(path);
  if (!maps) return Error("pid " + std::to_string(pid) + ": cannot read " + path);
  std::stringstream text;
  text << maps.rdbuf();
  return text.str();
}

Result<std::string> libcOfProcess(uint32_t pid, const std::string& proc_root) {
  INCISE_ASSIGN_OR_RETURN(std::string maps, readProcessMaps(pid, proc_root));
  Result<std::string> path = findLibcInMaps(maps);
  if (!path) return path.error().context("pid " + std::to_string(pid));
  return proc_root + "/" + std::to_string(pid) + "/root" + *path;
}

}  // namespace incise::recorder
