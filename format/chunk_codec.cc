// Chunk payloads: columns encoded and compressed one by one behind a
// Cap'n Proto ChunkHeader.
#include "format/chunk_codec.h"

#include <algorithm>
#include <optional>

#include "format/block_io.h"
#include "format/capnp_message.h"
#include "format/codecs/byte_blob_codec.h"
#include "format/row_order.h"
#include "schemas/trace.capnp.h"

namespace incise::format {

using codecs::ByteSpan;
using codecs::Registry;

namespace {

// A column all of one value is stored as that value; a byte-blob column only
// when every blob is empty (the value, a length, is then 0).
bool storeAsConstant(std::span<const uint64_t> values, Encoding declared) {
  return !values.empty() && values.size() <= codecs::kMaxConstantValues &&
         codecs::allEqual(values) && (declared != Encoding::kBytes || values.front() == 0);
}

// Buffers one thread reuses from chunk to chunk. A merged chunk's columns
// are megabytes; allocated afresh for each, their first touches were most
// of the recorder's CPU after the merges came in (a page fault costs
// 15-35 us in a VM without huge pages), and freed, glibc gave them back to the system.
struct EncodeScratch {
  std::vector<std::vector<uint64_t>> grouped;
  std::vector<uint64_t> differences;
  std::string area;
  std::string encoded;
  std::string compressed;
};

}  // namespace

Status encodeChunk(const SealedChunk& chunk, int zstd_level, EncodedChunk& out) {
  const Registry& registry = Registry::instance();
  thread_local EncodeScratch scratch;
  std::vector<std::vector<uint64_t>>& grouped = scratch.grouped;
  bool by_cpu = groupRowsByCpu(chunk, grouped);
  const std::vector<std::vector<uint64_t>>& columns = by_cpu ? grouped : chunk.columns;
  const codecs::Compressor* zstd = registry.compression(Compression::kZstd);
  std::string& area = scratch.area;
  std::string& encoded = scratch.encoded;
  std::string& compressed = scratch.compressed;
  area.clear();
  capnp::MallocMessageBuilder message;
  auto header = message.initRoot<schema::ChunkHeader>();
  header.setKind(chunk.kind);
  header.setRows(chunk.rows);
  header.setMinTime(chunk.min_time);
  header.setMaxTime(chunk.max_time);
  header.setFirstStackId(chunk.first_stack_id);
  header.setRowOrder(static_cast<uint8_t>(by_cpu ? RowOrder::kGroupedByCpu : RowOrder::kAppended));
  auto refs = header.initColumns(static_cast<unsigned>(columns.size()));
  out.raw_bytes = 0;
  out.stored_bytes = 0;
  for (size_t i = 0; i < columns.size(); ++i) {
    encoded.clear();
    Encoding encoding = chunk.encodings[i];
    std::optional<uint16_t> base = baseColumn(chunk.kind, static_cast<uint16_t>(i));
    if (storeAsConstant(columns[i], encoding)) {
      encoding = Encoding::kConstant;
    } else if (base && *base < columns.size() && columns[*base].size() == columns[i].size() &&
               encoding != Encoding::kBytes) {
      encoding = Encoding::kBaseDelta;
    }
    if (encoding == Encoding::kBaseDelta) {
      std::vector<uint64_t>& differences = scratch.differences;
      differences.resize(columns[i].size());
      for (size_t row = 0; row < differences.size(); ++row)
        differences[row] = columns[i][row] - columns[*base][row];
      registry.encoding(encoding)->encode(differences, encoded);
    } else if (encoding == Encoding::kBytes) {
      std::string_view bytes = i < chunk.blobs.size() ? chunk.blobs[i] : std::string_view();
      Status s = codecs::encodeBlobs(columns[i], bytes, encoded);
      if (!s) return s.error().context("column " + std::to_string(i));
    } else {
      const codecs::ValueCodec* codec = registry.encoding(encoding);
      if (codec == nullptr) return Error("column " + std::to_string(i) + ": unknown encoding");
      codec->encode(columns[i], encoded);
    }
    bool use_zstd = false;
    if (encoding != Encoding::kConstant) {  // a few bytes: a frame would only add to them
      INCISE_RETURN_IF_ERROR(zstd->compress(codecs::asBytes(encoded), zstd_level, compressed));
      use_zstd = compressed.size() < encoded.size();
    }
    const std::string& stored = use_zstd ? compressed : encoded;
    if (encoded.size() > codecs::kMaxRawColumnBytes) {
      return Error("column " + std::to_string(i) + " encodes to " + std::to_string(encoded.size()) +
                   " bytes, over the column limit");
    }
    auto ref = refs[static_cast<unsigned>(i)];
    ref.setId(static_cast<uint16_t>(i));
    ref.setEncoding(static_cast<uint8_t>(encoding));
    ref.setCompression(static_cast<uint8_t>(use_zstd ? Compression::kZstd : Compression::kNone));
    ref.setRawBytes(static_cast<uint32_t>(encoded.size()));
    ref.setStoredBytes(static_cast<uint32_t>(stored.size()));
    ref.setOffset(static_cast<uint32_t>(area.size()));
    area += stored;
    out.raw_bytes += encoded.size();
    out.stored_bytes += stored.size();
  }
  std::string header_bytes = packedMessage(message);
  out.payload.resize(4);
  putU32(reinterpret_cast<uint8_t*>(out.payload.data()),
         static_cast<uint32_t>(header_bytes.size()) | kPackedChunkHeader);
  out.payload += header_bytes;
  out.payload += area;
  return Status::ok();
}

const ColumnInfo* ChunkLayout::column(uint16_t id) const {
  for (const auto& c : columns) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

Result<ChunkLayout> parseChunk(ByteSpan payload, const ReaderOptions& options) {
  if (payload.size() < 4)
    return Error("chunk payload of " + std::to_string(payload.size()) +
                 " bytes has no header length");
  uint32_t header_word = getU32(payload.data());
  uint32_t header_size = header_word & ~kPackedChunkHeader;
  if (header_size > payload.size() - 4) {
    return Error("chunk header length " + std::to_string(header_size) + " exceeds the payload");
  }
  ByteSpan header = payload.subspan(4, header_size);
  std::string unpacked;
  if ((header_word & kPackedChunkHeader) != 0) {
    Result<std::string> words = unpackWords(header, kMaxChunkHeaderBytes);
    if (!words) return words.error().context("chunk header");
    unpacked = words.take();
    header = codecs::asBytes(unpacked);
  }
  Result<ChunkLayout> layout = readMessage(header, options, [](capnp::MessageReader& message) {
    auto r = message.getRoot<schema::ChunkHeader>();
    ChunkLayout l;
    l.kind = r.getKind();
    l.row_order = r.getRowOrder();
    l.rows = r.getRows();
    l.min_time = r.getMinTime();
    l.max_time = r.getMaxTime();
    l.first_stack_id = r.getFirstStackId();
    for (auto c : r.getColumns()) {
      l.columns.push_back(ColumnInfo{c.getId(), static_cast<Encoding>(c.getEncoding()),
                                     static_cast<Compression>(c.getCompression()), c.getRawBytes(),
                                     c.getStoredBytes(), c.getOffset()});
    }
    return l;
  });
  if (!layout) return layout.error().context("chunk header");
  layout->column_area = payload.subspan(4 + header_size);
  for (const auto& c : layout->columns) {
    if (uint64_t{c.offset} + c.stored_bytes > layout->column_area.size()) {
      return Error("column " + std::to_string(c.id) + " lies outside the chunk (" +
                   std::to_string(c.offset) + "+" + std::to_string(c.stored_bytes) + " > " +
                   std::to_string(layout->column_area.size()) + ")");
    }
  }
  return layout;
}

namespace {

// The column's bytes after decompression (in `scratch`, or in the payload).
Result<ByteSpan> uncompressedColumn(const ChunkLayout& layout, const ColumnInfo& column,
                                    std::string& scratch) {
  std::string where = "column " + std::to_string(column.id);
  const codecs::Compressor* compressor = Registry::instance().compression(column.compression);
  if (compressor == nullptr) {
    return Error(where + ": unknown compression " +
                 std::to_string(static_cast<int>(column.compression)));
  }
  ByteSpan stored = layout.column_area.subspan(column.offset, column.stored_bytes);
  if (column.compression != Compression::kNone) {
    Status s = compressor->decompress(stored, column.raw_bytes, scratch);
    if (!s) return s.error().context(where);
    return codecs::asBytes(scratch);
  }
  if (column.raw_bytes != column.stored_bytes) {
    return Error(where + ": uncompressed but raw and stored sizes differ");
  }
  return stored;
}

}  // namespace

Status decodeBytesColumn(const ChunkLayout& layout, const ColumnInfo& column, size_t rows,
                         std::vector<uint64_t>& lengths, DecodedBlobs& out) {
  std::string where = "column " + std::to_string(column.id);
  if (column.encoding != Encoding::kBytes) return Error(where + ": not a byte-blob column");
  const codecs::Compressor* compressor = Registry::instance().compression(column.compression);
  if (compressor == nullptr) {
    return Error(where + ": unknown compression " +
                 std::to_string(static_cast<int>(column.compression)));
  }
  if (column.raw_bytes > codecs::kMaxRawColumnBytes) {
    return Error(where + ": claims " + std::to_string(column.raw_bytes) + " raw bytes, over " +
                 std::to_string(codecs::kMaxRawColumnBytes));
  }
  ByteSpan stored = layout.column_area.subspan(column.offset, column.stored_bytes);
  if (column.compression != Compression::kNone) {
    // Before a buffer is sized for the claim.
    Status plausible = compressor->checkClaim(stored, column.raw_bytes);
    if (!plausible) return plausible.error().context(where);
  }
  out.buffer = acquireBlobBuffer(column.raw_bytes);
  std::span<uint8_t> raw(out.buffer.get(), column.raw_bytes);
  if (column.compression != Compression::kNone) {
    Status s = compressor->decompress(stored, raw);
    if (!s) return s.error().context(where);
  } else {
    if (column.raw_bytes != column.stored_bytes) {
      return Error(where + ": uncompressed but raw and stored sizes differ");
    }
    std::copy(stored.begin(), stored.end(), raw.begin());
  }
  Result<size_t> at = codecs::decodeBlobLengths(raw, rows, lengths);
  if (!at) return at.error().context(where);
  out.blobs_at = *at;
  out.blobs_size = raw.size() - *at;
  return Status::ok();
}

Status decodeColumn(const ChunkLayout& layout, const ColumnInfo& column, size_t values,
                    std::vector<uint64_t>& out, std::string& scratch) {
  std::string where = "column " + std::to_string(column.id);
  const codecs::ValueCodec* codec = Registry::instance().encoding(column.encoding);
  if (codec == nullptr) {
    return Error(where + ": unknown encoding " + std::to_string(static_cast<int>(column.encoding)));
  }
  INCISE_ASSIGN_OR_RETURN(ByteSpan encoded, uncompressedColumn(layout, column, scratch));
  Status s = codec->decode(encoded, values, out);
  if (!s) return s.error().context(where);
  return Status::ok();
}

}  // namespace incise::format
