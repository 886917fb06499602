// Where libincise-preload.so is: the copy installed beside incise-record
// (the one `-- CMD` is started with), or the one a running process has
// mapped (-p), so the allocation source can put its uprobes on the file the
// process runs.
//
//   Result<std::string> library = installedPreloadLibrary();  // ".../preload/libincise-preload.so"
//   Result<std::string> mapped = preloadLibraryOfProcess(1234);  // "/proc/1234/root/..."
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace incise::recorder {

inline constexpr char kPreloadLibraryName[] = "libincise-preload.so";

// Beside the recorder: ../preload/ in a build tree, ../lib/incise/ when
// installed, or its own directory; an Error naming the places looked at.
Result<std::string> installedPreloadLibrary();

// The library mapped in process `pid`, through /proc/PID/root; an Error
// saying how to start the process with it when it is not mapped.
Result<std::string> preloadLibraryOfProcess(uint32_t pid, const std::string& proc_root = "/proc");

}  // namespace incise::recorder
