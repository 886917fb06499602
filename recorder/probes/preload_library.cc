#include "recorder/probes/preload_library.h"

#include <unistd.h>

#include <filesystem>
#include <vector>

#include "recorder/probes/libc_locator.h"

namespace incise::recorder {

Result<std::string> installedPreloadLibrary() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return Error("cannot read /proc/self/exe: " + error.message());
  const std::filesystem::path dir = self.parent_path();
  const std::vector<std::filesystem::path> candidates = {
      dir.parent_path() / "preload" / kPreloadLibraryName,
      dir.parent_path() / "lib" / "incise" / kPreloadLibraryName, dir / kPreloadLibraryName};
  std::string looked;
  for (const std::filesystem::path& candidate : candidates) {
    if (access(candidate.c_str(), R_OK) == 0) return candidate.lexically_normal().string();
    looked += (looked.empty() ? "" : ", ") + candidate.lexically_normal().string();
  }
  return Error(std::string(kPreloadLibraryName) + " is not installed beside incise-record (" +
               looked + ")");
}

Result<std::string> preloadLibraryOfProcess(uint32_t pid, const std::string& proc_root) {
  INCISE_ASSIGN_OR_RETURN(std::string maps, readProcessMaps(pid, proc_root));
  std::optional<std::string> path = findExecutableInMaps(maps, [](std::string_view mapped) {
    return mapped.ends_with(std::string("/") + kPreloadLibraryName);
  });
  if (!path) {
    return Error("pid " + std::to_string(pid) + " has not loaded " + kPreloadLibraryName +
                 ", so its allocations cannot be sampled: record it from its start with "
                 "`incise record --alloc -- CMD`, or start it with LD_PRELOAD=DIR/" +
                 kPreloadLibraryName + " INCISE_ALLOC_SAMPLE_BYTES=524288");
  }
  return proc_root + "/" + std::to_string(pid) + "/root" + *path;
}

}  // namespace incise::recorder
