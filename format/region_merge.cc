// What a merge of the region's small chunks writes.
#include "format/region_merge.h"

#include <algorithm>

#include "format/block_io.h"
#include "format/metadata_codec.h"

namespace incise::format {
namespace {

// A chunk of 1/16 of a full one or more already amortises its header and
// frames: merging the ~1,600-row chunks of 999 Hz on 2 CPUs saved 17% of
// the file but encoded every row twice, +1.3 ms/s of recorder CPU (steady
// 1.7 -> 3.0-3.8 ms/s on cpu_shares); the ~160-row chunks of 99 Hz take
// the gain for a fraction of that.
constexpr uint32_t kSmallChunkShare = 16;  // of rows_per_chunk
// A flush's new threads and mappings take a few hundred bytes; the symbol
// tables of a burst of new objects take megabytes, and encoding them again
// would cost more than their block header saves.
constexpr size_t kSmallMetadataBytes = 64u << 10;

uint64_t valueBytes(const SealedChunk& chunk) {
  uint64_t n = 0;
  for (const auto& c : chunk.columns) n += c.size() * sizeof(uint64_t);
  for (const auto& b : chunk.blobs) n += b.size();
  return n;
}

uint64_t blobBytes(const SealedChunk& chunk) {
  uint64_t n = 0;
  for (const auto& b : chunk.blobs) n += b.size();
  return n;
}

// The first part of a region sets what the merged chunk is; its columns
// keep their capacity from the last region.
void appendRows(SealedChunk& into, bool first, const SealedChunk& from) {
  if (first) {
    into.kind = from.kind;
    into.encodings = from.encodings;
    into.first_stack_id = from.first_stack_id;
    into.rows = 0;
    into.min_time = from.min_time;
    into.max_time = from.max_time;
    into.columns.resize(from.columns.size());
    into.blobs.resize(from.blobs.size());
    for (auto& c : into.columns) c.clear();
    for (auto& b : into.blobs) b.clear();
  }
  into.rows += from.rows;
  if (from.rows > 0 && from.min_time != 0) {
    into.min_time = into.min_time == 0 ? from.min_time : std::min(into.min_time, from.min_time);
  }
  into.max_time = std::max(into.max_time, from.max_time);
  if (into.blobs.size() < from.blobs.size()) into.blobs.resize(from.blobs.size());
  for (size_t i = 0; i < from.columns.size() && i < into.columns.size(); ++i) {
    into.columns[i].insert(into.columns[i].end(), from.columns[i].begin(), from.columns[i].end());
  }
  for (size_t i = 0; i < from.blobs.size(); ++i) into.blobs[i] += from.blobs[i];
}

void appendBlock(MergedRegion& out, BlockType type, codecs::ByteSpan payload, IndexEntry entry) {
  auto header = encodeBlockHeader(type, payload);
  entry.offset = out.blocks.size();
  entry.length = static_cast<uint32_t>(payload.size());
  entry.type = type;
  out.blocks.append(reinterpret_cast<const char*>(header.data()), header.size());
  out.blocks.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  out.entries.push_back(entry);
}

}  // namespace

MergeRegion::MergeRegion(MergeLimits limits) : limits_(limits) {
  rows_.resize(kAllEventKinds.size() + 1);
}

void MergeRegion::restart(uint64_t start) {
  start_ = start;
  held_ = 0;
  for (auto& r : rows_) r.parts = 0;
  metadata_ = MetadataDelta();
  metadata_parts_ = 0;
}

std::optional<size_t> MergeRegion::slotOf(uint8_t kind) {
  if (kind == kStackTableKind) return 0;
  if (kind >= 1 && kind <= kAllEventKinds.size()) return kind;
  return std::nullopt;
}

bool MergeRegion::isSmall(const SealedChunk& chunk) const {
  if (!slotOf(chunk.kind)) return false;
  if (chunk.rows >= limits_.rows_per_chunk / kSmallChunkShare) return false;
  if (blobBytes(chunk) >= limits_.blob_bytes / kSmallChunkShare) return false;
  return chunk.kind != kStackTableKind || chunk.columns.size() < 2 ||
         chunk.columns[1].size() < limits_.frames_per_stack_chunk / kSmallChunkShare;
}

bool MergeRegion::isSmallMetadata(size_t message_bytes) {
  return message_bytes < kSmallMetadataBytes;
}

bool MergeRegion::fits(const SealedChunk& chunk) const {
  std::optional<size_t> slot = slotOf(chunk.kind);
  if (!slot || held_ + valueBytes(chunk) > limits_.held_bytes) return false;
  const Rows& rows = rows_[*slot];
  if (rows.parts == 0) return true;
  const SealedChunk& m = rows.merged;
  if (m.rows + uint64_t{chunk.rows} > limits_.rows_per_chunk) return false;
  if (blobBytes(m) + blobBytes(chunk) > limits_.blob_bytes) return false;
  if (chunk.kind == kStackTableKind) {
    // Stack ids run on from one table chunk to the next; merged, they must still.
    if (chunk.first_stack_id != m.first_stack_id + m.rows) return false;
    if (m.columns.size() < 2 || chunk.columns.size() < 2 ||
        m.columns[1].size() + chunk.columns[1].size() > limits_.frames_per_stack_chunk) {
      return false;
    }
  }
  return m.encodings == chunk.encodings;
}

bool MergeRegion::fitsMetadata(size_t message_bytes) const {
  // The decoded delta takes about twice its message.
  return held_ + 2 * message_bytes <= limits_.held_bytes;
}

void MergeRegion::addMetadata(MetadataDelta&& delta, size_t message_bytes) {
  held_ += 2 * message_bytes;
  ++metadata_parts_;
  mergeMetadata(metadata_, std::move(delta));
}

void MergeRegion::add(const SealedChunk& chunk) {
  held_ += valueBytes(chunk);
  Rows& rows = rows_[*slotOf(chunk.kind)];
  appendRows(rows.merged, rows.parts == 0, chunk);
  ++rows.parts;
}

bool MergeRegion::worthMerging() const {
  auto extra = [](const Rows& r) { return r.parts > 1 ? r.parts - 1 : 0; };
  uint32_t merges = metadata_parts_ > 1 ? metadata_parts_ - 1 : 0;
  for (const auto& r : rows_) merges += extra(r);
  return merges > 0;
}

Status MergeRegion::merge(int zstd_level, const MetadataEncoder& encode_metadata,
                          MergedRegion& out) const {
  out.blocks.clear();
  out.entries.clear();
  if (metadata_parts_ > 0) {
    std::string payload = encode_metadata(metadata_);
    appendBlock(out, BlockType::kMetadata, codecs::asBytes(payload), IndexEntry{});
  }
  // Slot 0, the stack table, first: a reader checks stack ids only increase.
  EncodedChunk encoded;
  for (size_t slot = 0; slot < rows_.size(); ++slot) {
    if (rows_[slot].parts == 0) continue;
    const SealedChunk& chunk = rows_[slot].merged;
    INCISE_RETURN_IF_ERROR(encodeChunk(chunk, zstd_level, encoded));
    appendBlock(out, slot == 0 ? BlockType::kStackChunk : BlockType::kEventChunk,
                codecs::asBytes(encoded.payload),
                IndexEntry{.kind = chunk.kind,
                           .rows = chunk.rows,
                           .min_time = chunk.min_time,
                           .max_time = chunk.max_time});
  }
  return Status::ok();
}

}  // namespace incise::format
