// The online CPUs, for sources that open one perf event per CPU.
//
//   Result<std::vector<int>> cpus = onlineCpus();   // {0, 1}
//   std::vector<int> parsed = *parseCpuList("0-3,8");  // {0, 1, 2, 3, 8}
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"

namespace incise::recorder {

// A kernel cpu list ("0-3,8\n"); an Error on a malformed or empty list.
Result<std::vector<int>> parseCpuList(std::string_view text);

// parseCpuList of /sys/devices/system/cpu/online.
Result<std::vector<int>> onlineCpus();

}  // namespace incise::recorder
