// The payload of a chunk block (event rows or stack-table rows):
//   u32 LE n | n bytes: Cap'n Proto ChunkHeader | column area
// Each column is encoded (varint, delta, ...) then zstd-compressed on its own
// unless compression would not shrink it; ColumnRef says where it lies.
// From format 2.0: when n has its top bit set (kPackedChunkHeader) the
// header is stored packed in n & 0x7FFFFFFF bytes; a column of equal values
// is stored as kConstant; cpu-sample rows may be grouped by cpu
// (format/row_order.h). Readers of 1.2 files see none of these.
//
//   SealedChunk sealed{.kind = 1, .rows = n, .columns = ..., .encodings = ...};
//   EncodedChunk encoded;
//   INCISE_RETURN_IF_ERROR(encodeChunk(sealed, 3, encoded));
//   ...
//   Result<ChunkLayout> layout = parseChunk(payload, options);
//   INCISE_RETURN_IF_ERROR(decodeColumn(*layout, layout->columns[0], rows, values, scratch));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/codecs/codec.h"
#include "format/event_kinds.h"
#include "format/reader.h"

namespace incise::format {

struct SealedChunk {
  uint8_t kind = 0;  // EventKind, or kStackTableKind
  uint32_t rows = 0;
  uint64_t min_time = 0;
  uint64_t max_time = 0;
  uint64_t first_stack_id = 0;
  std::vector<std::vector<uint64_t>> columns;  // column i has id i
  std::vector<Encoding> encodings;
  std::vector<std::string> blobs;  // kBytes column i's bytes in blobs[i] (may be empty)
};

struct EncodedChunk {
  std::string payload;
  uint64_t raw_bytes = 0;     // all columns, encoded
  uint64_t stored_bytes = 0;  // all columns, as stored
};

Status encodeChunk(const SealedChunk& chunk, int zstd_level, EncodedChunk& out);

struct ColumnInfo {
  uint16_t id = 0;
  Encoding encoding{};
  Compression compression{};
  uint32_t raw_bytes = 0;
  uint32_t stored_bytes = 0;
  uint32_t offset = 0;
};

// The top bit of the header length: the header is packed (format 2.0).
inline constexpr uint32_t kPackedChunkHeader = 0x80000000u;
// The most a packed chunk header may unpack to; ours are a few hundred bytes.
inline constexpr size_t kMaxChunkHeaderBytes = 1u << 20;

struct ChunkLayout {
  uint8_t kind = 0;
  uint8_t row_order = 0;  // format::RowOrder
  uint32_t rows = 0;
  uint64_t min_time = 0;
  uint64_t max_time = 0;
  uint64_t first_stack_id = 0;
  std::vector<ColumnInfo> columns;
  codecs::ByteSpan column_area;  // points into the payload given to parseChunk

  const ColumnInfo* column(uint16_t id) const;
};

// Parses the chunk header and checks every column lies inside the payload.
Result<ChunkLayout> parseChunk(codecs::ByteSpan payload, const ReaderOptions& options);

// Decompresses and decodes one column, which must hold exactly `values`.
Status decodeColumn(const ChunkLayout& layout, const ColumnInfo& column, size_t values,
                    std::vector<uint64_t>& out, std::string& scratch);

// A kBytes column: exactly `rows` lengths into `lengths`; the column is
// decompressed into `buffer` (from acquireBlobBuffer) and its blobs are the
// `blobs_size` bytes at `buffer` + `blobs_at`.
struct DecodedBlobs {
  std::shared_ptr<uint8_t[]> buffer;
  size_t blobs_at = 0;
  size_t blobs_size = 0;
};
Status decodeBytesColumn(const ChunkLayout& layout, const ColumnInfo& column, size_t rows,
                         std::vector<uint64_t>& lengths, DecodedBlobs& out);

}  // namespace incise::format
