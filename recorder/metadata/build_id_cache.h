// BuildIdCache: the GNU build-id of mapped files, read once per file.
//
// The kernel puts the build-id in its mmap records (5.12+); this is for
// /proc/PID/maps lines and older kernels' records, which name a file by
// device, inode and path. The cache is bounded: past kMaxEntries it starts
// over (a whole box's distinct files in a long recording).
//
//   BuildIdCache build_ids;
//   std::string id = build_ids.of("/proc/42/root/usr/lib/libc.so.6",
//   "8:1:1234:/usr/lib/libc.so.6");
#pragma once

#include <string>
#include <unordered_map>

namespace incise::recorder {

class BuildIdCache {
 public:
  static constexpr size_t kMaxEntries = 8192;
  // Raw build-id bytes of the ELF file at `open_path` (empty when it has
  // none or cannot be read; a file that could not be read is tried again
  // next time); `key` names the file across processes.
  std::string of(const std::string& open_path, const std::string& key);
  size_t size() const { return ids_.size(); }

 private:
  std::unordered_map<std::string, std::string> ids_;
};

}  // namespace incise::recorder
