// ProcessImage: what the in-kernel unwinder needs to know of one process —
// its executable mappings and the identity of its address space — read from
// /proc/PID/maps and /proc/PID/stat.
//
// `start_stack` (mm->start_stack, randomized at every exec) tells the BPF
// side whether the mappings it has still describe the running image: it
// compares it with the task's own before using them.
//
//   Result<ProcessImage> image = readProcessImage("/proc", pid);
//   for (const ExecMapping& m : image->mappings) ...   // sorted by start
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace incise::recorder {

struct ExecMapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;  // file offset of `start`
  uint64_t device = 0;  // makedev(major, minor) of the file; 0 for anonymous memory
  uint64_t inode = 0;
  std::string path;  // as /proc/PID/maps shows it ("" anonymous, "[vdso]", "/x (deleted)")

  bool fileBacked() const { return inode != 0 && !path.empty() && path[0] == '/'; }
  bool deleted() const;
};

struct ProcessImage {
  uint64_t start_stack = 0;
  std::vector<ExecMapping> mappings;  // executable ones only, sorted by start
};

// An Error when the process is gone (or its maps cannot be read). The stat
// line is read before and after the maps: an exec in between is retried.
Result<ProcessImage> readProcessImage(const std::string& proc_root, uint32_t pid);

// Parsers, exposed for tests: one /proc/PID/maps line (false when it is not
// one), and the startstack field of a /proc/PID/stat line (0 when absent).
bool parseExecMapping(std::string_view line, ExecMapping& out, bool& executable);
uint64_t parseStartStack(std::string_view stat_line);

}  // namespace incise::recorder
