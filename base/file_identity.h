// FileIdentity: which file a path names, as device and inode. Two paths
// (a process's /proc/PID/exe, a name in its root, a descriptor's
// /proc/self/fd/N) name the same file when their identities are equal,
// whatever their spellings, links or mount namespaces.
//
//   std::optional<FileIdentity> exe = fileIdentity("/proc/42/exe");
//   if (exe && exe == fileIdentity("/proc/42/root/usr/bin/server")) ...
#pragma once

#include <sys/stat.h>

#include <compare>
#include <optional>
#include <string>

namespace incise {

struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  auto operator<=>(const FileIdentity&) const = default;
};

// nullopt when the path cannot be stat'ed (errno says why).
inline std::optional<FileIdentity> fileIdentity(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return std::nullopt;
  return FileIdentity{info.st_dev, info.st_ino};
}

}  // namespace incise
