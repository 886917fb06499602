// The libincise-preload.so a running process has mapped (-p), so the
// allocation source can put its uprobes on the file the process runs (the
// copy `-- CMD` is started with is recorder/preload_library.h's).
//
//   Result<std::string> mapped = preloadLibraryOfProcess(1234);  // "/proc/1234/root/..."
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "recorder/preload_library.h"

namespace incise::recorder {

// The library mapped in process `pid`, through /proc/PID/root; an Error
// saying how to start the process with it when it is not mapped.
Result<std::string> preloadLibraryOfProcess(uint32_t pid, const std::string& proc_root = "/proc");

}  // namespace incise::recorder
