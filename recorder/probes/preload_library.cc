#include "recorder/probes/preload_library.h"

#include "recorder/probes/libc_locator.h"

namespace incise::recorder {

Result<std::string> preloadLibraryOfProcess(uint32_t pid, const std::string& proc_root) {
  INCISE_ASSIGN_OR_RETURN(std::string maps, readProcessMaps(pid, proc_root));
  std::optional<std::string> path = findExecutableInMaps(maps, [](std::string_view mapped) {
    return mapped.ends_with(std::string("/") + kPreloadLibraryName);
  });
  if (!path) {
    return Error("pid " + std::to_string(pid) + " has not loaded " + kPreloadLibraryName +
                 ", so its allocations cannot be sampled: record it from its start with "
                 "`incise-record --alloc -- CMD`, or start it with LD_PRELOAD=DIR/" +
                 kPreloadLibraryName + " INCISE_ALLOC_SAMPLE_BYTES=524288");
  }
  return proc_root + "/" + std::to_string(pid) + "/root" + *path;
}

}  // namespace incise::recorder
