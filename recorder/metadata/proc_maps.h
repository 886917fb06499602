// The executable mappings of a running process, from /proc/PID/maps: for
// processes that were already running when recording began (the kernel's
// mmap records cover the rest), and for every process when those records
// are unavailable.
//
//   std::vector<ExecutableMapping> now =
//       readProcMaps("/proc", 42, /*stamp=*/start_ns, table, build_ids);
//   table.loadSnapshot(42, std::move(now), read_time);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recorder/metadata/build_id_cache.h"
#include "recorder/metadata/mapping_table.h"

namespace incise::recorder {

struct ProcMapsLine {
  uint64_t start = 0, end = 0, offset = 0;
  std::string perms, dev, inode, path;
};

// One line of /proc/PID/maps; false when it does not parse.
bool parseProcMapsLine(const std::string& line, ProcMapsLine& out);

// The executable mappings in `proc_root`/PID/maps, each stamped `stamp`,
// objects interned in `table`, build-ids read through the process's root.
std::vector<ExecutableMapping> readProcMaps(const std::string& proc_root, uint32_t pid,
                                            uint64_t stamp, MappingTable& table,
                                            BuildIdCache& build_ids);

}  // namespace incise::recorder
