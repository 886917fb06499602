// rewriteRegion: the file I/O of a region merge (format/region_merge.h):
// puts the merged blocks in place of the region they replace so that a kill
// at any moment leaves a file a scan can read.
//   1. append one kRegionCopy block: the region's bounds and the merged blocks;
//   2. overwrite the region in place with the merged blocks;
//   3. truncate the file after them.
//
//   Result<RegionRewrite> done = rewriteRegion(fd, path, start, end, merged, index);
//   if (!done) return done.error();
//   offset = done->next_offset;
//   if (!done->keep_merging) merging = false;
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/region_merge.h"

namespace incise::format {

struct RegionRewrite {
  uint64_t next_offset = 0;  // where the next block goes
  bool keep_merging = true;  // false after a failed write: merge no more
  bool rewritten = false;    // `index` lists the merged blocks instead of the region's
};

// Rewrites [start, end) of `fd` (the region; `end` is the file's end) with
// `merged`, and replaces the region's entries of `index` (those from
// `start` on) with the merged ones. A failed write is no error: the copy
// not written leaves the region as it was; the region not overwritten
// leaves the copy, which is indexed where it lies. Only a failed truncate
// of a copy not fully written is an error.
Result<RegionRewrite> rewriteRegion(int fd, const std::string& path, uint64_t start, uint64_t end,
                                    const MergedRegion& merged, std::vector<IndexEntry>& index);

}  // namespace incise::format
