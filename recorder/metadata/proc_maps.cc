#include "recorder/metadata/proc_maps.h"

#include <sys/mman.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "base/hex.h"

namespace incise::recorder {

namespace {

uint32_t protOf(const std::string& perms) {
  uint32_t prot = 0;
  if (perms[0] == 'r') prot |= PROT_READ;
  if (perms[1] == 'w') prot |= PROT_WRITE;
  if (perms[2] == 'x') prot |= PROT_EXEC;
  return prot;
}

}  // namespace

bool parseProcMapsLine(const std::string& line, ProcMapsLine& out) {
  std::istringstream in(line);
  std::string range, offset;
  if (!(in >> range >> out.perms >> offset >> out.dev >> out.inode)) return false;
  std::getline(in >> std::ws, out.path);
  size_t dash = range.find('-');
  if (dash == std::string::npos) return false;
  std::optional<uint64_t> start = parseHex(std::string_view(range).substr(0, dash));
  std::optional<uint64_t> end = parseHex(std::string_view(range).substr(dash + 1));
  std::optional<uint64_t> file_offset = parseHex(offset);
  if (!start || !end || !file_offset || out.perms.size() < 3) return false;
  out.start = *start;
  out.end = *end;
  out.offset = *file_offset;
  return true;
}

std::vector<ExecutableMapping> readProcMaps(const std::string& proc_root, uint32_t pid,
                                            uint64_t stamp, MappingTable& table,
                                            BuildIdCache& build_ids) {
  const std::string dir = proc_root + "/" + std::to_string(pid);
  std::ifstream file(dir + "/maps");
  std::vector<ExecutableMapping> out;
  std::string line;
  while (std::getline(file, line)) {
    ProcMapsLine m;
    if (!parseProcMapsLine(line, m)) continue;
    // Frames only land in executable mappings; JIT code is anonymous (no path).
    if (m.perms[2] != 'x') continue;
    ExecutableMapping mapping{.pid = pid,
                              .start = m.start,
                              .end = m.end,
                              .file_offset = m.offset,
                              .prot = protOf(m.perms),
                              .time = stamp};
    std::string build_id;
    MappedObject probe{.path = m.path};
    if (probe.fileBacked()) {
      char range_name[64];
      std::snprintf(range_name, sizeof(range_name), "%lx-%lx", static_cast<unsigned long>(m.start),
                    static_cast<unsigned long>(m.end));
      // map_files works for deleted files too; root/ resolves container paths.
      mapping.open_path =
          probe.deleted() ? dir + "/map_files/" + range_name : dir + "/root" + m.path;
      build_id = build_ids.of(mapping.open_path, m.dev + ":" + m.inode + ":" + m.path);
    }
    mapping.object = table.object(m.path, build_id);
    out.push_back(std::move(mapping));
  }
  return out;
}

}  // namespace incise::recorder
