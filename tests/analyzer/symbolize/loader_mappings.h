// Test support: the mappings a dynamic loader would create for an object
// loaded at `bias` (0 for an ET_EXEC), one per PT_LOAD, page-aligned as mmap
// requires, so symbolizer tests see realistic (pid, address) inputs.
//
//   auto maps = loaderMappings(*object, /*pid=*/42, /*bias=*/0x55d4c3a00000, "/bin/app");
#pragma once

#include <elf.h>
#include <sys/mman.h>

#include <string>
#include <vector>

#include "format/metadata.h"

namespace incise::analyzer::testing {

inline std::vector<format::Mapping> loaderMappings(const format::ObjectSymbols& object,
                                                   uint32_t pid, uint64_t bias,
                                                   const std::string& path, uint64_t time = 0) {
  constexpr uint64_t kPage = 4096;
  std::vector<format::Mapping> mappings;
  for (const format::Segment& segment : object.segments) {
    format::Mapping mapping;
    mapping.pid = pid;
    mapping.start = bias + (segment.vaddr & ~(kPage - 1));
    mapping.end = bias + ((segment.vaddr + segment.mem_size + kPage - 1) & ~(kPage - 1));
    mapping.file_offset = segment.file_offset & ~(kPage - 1);
    mapping.path = path;
    mapping.build_id = object.build_id;
    mapping.prot = ((segment.flags & PF_R) ? PROT_READ : 0) |
                   ((segment.flags & PF_W) ? PROT_WRITE : 0) |
                   ((segment.flags & PF_X) ? PROT_EXEC : 0);
    mapping.time = time;
    mappings.push_back(mapping);
  }
  return mappings;
}

}  // namespace incise::analyzer::testing
