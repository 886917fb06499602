#include "format/region_rewrite.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "format/block_io.h"
#include "format/codecs/codec.h"
#include "format/file_layout.h"

namespace incise::format {

Result<RegionRewrite> rewriteRegion(int fd, const std::string& path, uint64_t start, uint64_t end,
                                    const MergedRegion& merged, std::vector<IndexEntry>& index) {
  std::string copy(kRegionCopyPrefix, '\0');
  putU64(reinterpret_cast<uint8_t*>(copy.data()), start);
  putU64(reinterpret_cast<uint8_t*>(copy.data()) + 8, end);
  copy += merged.blocks;
  auto copy_header = encodeBlockHeader(BlockType::kRegionCopy, codecs::asBytes(copy));
  copy.insert(0, reinterpret_cast<const char*>(copy_header.data()), copy_header.size());
  if (!pwriteAll(fd, end, codecs::asBytes(copy), path)) {
    // Most likely a full disk: keep the small chunks as they are (the next
    // write reports the error, if it lasts).
    if (::ftruncate(fd, static_cast<off_t>(end)) != 0)
      return Error("truncating " + path + ": " + std::strerror(errno));
    return RegionRewrite{.next_offset = end, .keep_merging = false};
  }
  RegionRewrite done{.rewritten = true};
  uint64_t merged_at = start;
  Status in_place = pwriteAll(fd, start, codecs::asBytes(merged.blocks), path);
  if (in_place && ::ftruncate(fd, static_cast<off_t>(start + merged.blocks.size())) != 0)
    in_place = Error("truncating " + path + ": " + std::strerror(errno));
  if (in_place) {
    done.next_offset = start + merged.blocks.size();
  } else {
    // The copy at the end is whole and a scan prefers it to the region;
    // index its blocks where they lie and go on after it.
    done.keep_merging = false;
    merged_at = end + kBlockHeaderSize + kRegionCopyPrefix;
    done.next_offset = end + copy.size();
  }
  auto first_in_region = std::find_if(index.begin(), index.end(),
                                      [&](const IndexEntry& e) { return e.offset >= start; });
  index.erase(first_in_region, index.end());
  for (IndexEntry e : merged.entries) {
    e.offset += merged_at;
    index.push_back(e);
  }
  return done;
}

}  // namespace incise::format
