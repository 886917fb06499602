#include "recorder/metadata/build_id_cache.h"

#include "base/status.h"
#include "objfile/elf_reader.h"

namespace incise::recorder {

std::string BuildIdCache::of(const std::string& open_path, const std::string& key) {
  auto it = ids_.find(key);
  if (it != ids_.end()) return it->second;
  if (ids_.size() >= kMaxEntries) ids_.clear();
  Result<std::string> id = objfile::readBuildId(open_path);
  // Not remembered: the path may work through another process (this one
  // may have exited) and the next mapping of the file tries again.
  if (!id) return std::string();
  return ids_.emplace(key, *id).first->second;
}

}  // namespace incise::recorder
