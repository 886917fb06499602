// Small chunks merged after the fact, as ClickHouse merges small parts, in a
// file that must stay salvageable at every moment.
//
// The recorder flushes every 800 ms so that a kill loses at most the last
// second. At low rates that makes chunks of a few hundred rows whose headers,
// zstd frames and index entries outweigh their data: cpu_shares at 99 Hz for
// 20 s took 25,398 bytes in 800-ms chunks and 14,825 with one chunk per kind.
// So the writer remembers the region of the file written since the last
// merge, as long as it holds only small chunks and small metadata deltas:
// their values and deltas. When a large block comes, the region is full, or
// the file closes, it rewrites the region with one metadata block and one
// chunk per kind (format/region_rewrite.h does the I/O):
//   1. append one kRegionCopy block: the region's bounds and the merged blocks;
//   2. overwrite the region in place with the merged blocks;
//   3. truncate the file after them.
// A kill at any moment leaves the small chunks, or a whole copy that a scan
// takes instead of the region (format/recovery.cc), or the merged region.
//
//   MergeRegion region({.rows_per_chunk = 16384});
//   region.restart(offset);
//   if (!region.fits(chunk)) { merge and rewrite; region.restart(end); }
//   write the block; region.isSmall(chunk) ? region.add(chunk) : region.restart(after it);
//   MergedRegion merged;
//   if (region.worthMerging()) INCISE_RETURN_IF_ERROR(region.merge(3, encodeDelta, merged));
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/chunk_codec.h"
#include "format/file_layout.h"
#include "format/metadata.h"

namespace incise::format {

// One block as the footer indexes it.
struct IndexEntry {
  uint64_t offset = 0;
  uint32_t length = 0;  // payload bytes
  BlockType type{};
  uint8_t kind = 0;
  uint32_t rows = 0;
  uint64_t min_time = 0;
  uint64_t max_time = 0;
};

struct MergedRegion {
  std::string blocks;               // whole blocks (header and payload), back to back
  std::vector<IndexEntry> entries;  // offsets from the start of `blocks`
};

struct MergeLimits {
  uint32_t rows_per_chunk = 65536;  // rows of one kind in a merged chunk
  uint64_t blob_bytes = 8u << 20;   // stack-copy bytes of one kind in a merged chunk
  uint64_t held_bytes = 4u << 20;   // values and deltas the region keeps in memory
  uint64_t frames_per_stack_chunk = 1u << 20;
};

class MergeRegion {
 public:
  explicit MergeRegion(MergeLimits limits);

  // An empty region starting at file offset `start`.
  void restart(uint64_t start);
  uint64_t start() const { return start_; }

  // Small chunks (and metadata deltas) are merged; a large one is written
  // as it is, after the region is merged, and a new region starts after it.
  bool isSmall(const SealedChunk& chunk) const;
  static bool isSmallMetadata(size_t message_bytes);

  // Whether a small `chunk` can join the region; if not, merge the region
  // first and start a new one.
  bool fits(const SealedChunk& chunk) const;
  bool fitsMetadata(size_t message_bytes) const;

  // After the small chunk's (or delta's) block was written.
  void add(const SealedChunk& chunk);
  void addMetadata(MetadataDelta&& delta, size_t message_bytes);

  // Some kind, the stack table or the metadata has two small parts or more.
  bool worthMerging() const;

  // The region as one metadata block (its payload from `encode_metadata`),
  // one stack-table chunk and one chunk per event kind.
  using MetadataEncoder = std::function<std::string(const MetadataDelta&)>;
  Status merge(int zstd_level, const MetadataEncoder& encode_metadata, MergedRegion& out) const;

 private:
  // Small chunks of one kind (or the stack table), concatenated. Emptied,
  // not freed, between regions: the next region fills the same columns.
  struct Rows {
    SealedChunk merged;
    uint32_t parts = 0;
  };

  // Index into rows_ of a chunk kind: 0 for the stack table, else its EventKind id.
  static std::optional<size_t> slotOf(uint8_t kind);

  MergeLimits limits_;
  uint64_t start_ = 0;
  uint64_t held_ = 0;
  std::vector<Rows> rows_;  // by slotOf(kind)
  MetadataDelta metadata_;  // the small deltas, concatenated in file order
  uint32_t metadata_parts_ = 0;
};

}  // namespace incise::format
