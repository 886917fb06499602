// The trace reader: header, footer index (or a recovery scan), metadata and
// stack table at open; event chunks decoded on demand with pread.
#include "format/reader.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "format/block_io.h"
#include "format/capnp_message.h"
#include "format/chunk_codec.h"
#include "format/message_payload.h"
#include "format/metadata_codec.h"
#include "format/recovery.h"
#include "format/row_order.h"
#include "schemas/trace.capnp.h"

namespace incise::format {
namespace {

constexpr size_t kKindSlots = kAllEventKinds.size() + 1;  // EventKind ids are 1..N
// A salvaged stack chunk may leave a gap in ids; a gap this large is a lie.
constexpr uint64_t kMaxStackIdGap = uint64_t{1} << 26;
// Every id below the largest costs the stack table 8 bytes, lost or not, so
// ids are bounded by the file: lost stacks took file bytes too, and recorded
// stacks take far more than 1/16 byte each (slack: one full stack chunk).
// Without this bound a few crafted KB whose ids jump 2^26 per stack chunk
// cost 512 MB each (a fuzz timeout).
constexpr uint64_t kStackIdsPerFileByte = 16;
constexpr uint64_t kStackIdSlack = uint64_t{1} << 16;

std::string blockAt(uint64_t offset) {
  return "block at offset " + std::to_string(offset);
}

bool isEventKind(uint8_t kind) {
  return kind >= 1 && kind < kKindSlots;
}

struct FooterIndex {
  std::vector<ChunkRef> blocks;
  uint64_t end_mono_ns = 0;
};

class ReaderImpl final : public Reader {
 public:
  ReaderImpl(TraceFile file, const ReaderOptions& options)
      : file_(std::move(file)), options_(options) {}

  Status open() {
    if (file_.size < sizeof(kFileMagic)) {
      return Error(file_.path + " is not an incise trace (" + std::to_string(file_.size) +
                   " bytes, too short)");
    }
    char magic[sizeof(kFileMagic)];
    INCISE_RETURN_IF_ERROR(
        preadAll(file_.fd.get(), 0,
                 std::span<uint8_t>(reinterpret_cast<uint8_t*>(magic), sizeof(magic)), file_.path));
    bool magic_ok = std::memcmp(magic, kFileMagic, sizeof(magic)) == 0;
    recovery_.file_size = file_.size;
    uint64_t after_header = sizeof(kFileMagic);
    Status header_read = readHeaderBlock(after_header);
    // A damaged magic alone, before an intact header, is a bit flip, not another file.
    if (!magic_ok && !header_read) return Error(file_.path + " is not an incise trace (bad magic)");
    if (!magic_ok) {
      recovery_.damage.push_back(Damage{0, sizeof(kFileMagic), "the file magic is damaged"});
    }
    if (header_read && header_.format_major > kFormatMajor) {
      return Error(file_.path + " uses trace format " + std::to_string(header_.format_major) + "." +
                   std::to_string(header_.format_minor) +
                   ", newer than this reader understands (format " + std::to_string(kFormatMajor) +
                   "." + std::to_string(kFormatMinor) + "); upgrade incise to read it");
    }
    if (!header_read) {
      // The blocks after a damaged header still hold the recording: read
      // them as this reader's own format, and say what is unknown.
      header_ = Header{};
      recovery_.header_lost = true;
      recovery_.why_header_lost = header_read.error().message();
    }
    Result<FooterIndex> index = readFooter(after_header);
    Status loaded = index ? loadFromIndex(*index) : Status(index.error());
    if (loaded && recovery_.header_lost) {
      uint64_t next = file_.size;  // the header's block ends where the next indexed one starts
      for (const ChunkRef& ref : blocks_) next = std::min(next, ref.offset);
      recovery_.damage.push_back(Damage{sizeof(kFileMagic), next - sizeof(kFileMagic),
                                        "trace header: " + recovery_.why_header_lost});
    }
    if (!loaded) {
      recovery_.used_footer = false;
      recovery_.why_scanned = loaded.error().message();
      resetLoaded();
      // Without a header the scan starts where it would have been, and
      // reports it as the first damage.
      INCISE_RETURN_IF_ERROR(scan(after_header));
    }
    for (const auto& d : recovery_.damage)
      recovery_.first_damage = std::min(recovery_.first_damage, d.offset);
    uint64_t first_time = UINT64_MAX;
    for (const auto& ref : blocks_) {
      if (ref.block_type == BlockType::kEventChunk && isEventKind(static_cast<uint8_t>(ref.kind))) {
        rows_[static_cast<size_t>(ref.kind)] += ref.rows;
        if (!recovery_.used_footer) end_time_ = std::max(end_time_, ref.max_time);
        first_time = std::min(first_time, ref.min_time);
      }
    }
    // A header that does not read with no block after it leaves nothing to
    // salvage (a file cut inside its header, or not a trace at all).
    if (recovery_.header_lost && blocks_.empty()) {
      return Error(file_.path + ": no trace to read: " + recovery_.why_header_lost);
    }
    // Without the header's start time, the recording starts at its first event.
    if (recovery_.header_lost && first_time != UINT64_MAX) header_.start_mono_ns = first_time;
    return Status::ok();
  }

  // The header block at `offset`: on success header_ is set and `offset`
  // moves past the block. An Error says why it cannot be used.
  Status readHeaderBlock(uint64_t& offset) {
    INCISE_ASSIGN_OR_RETURN(VerifiedBlock first, readVerifiedBlock(file_, offset, file_.size));
    if (first.header.type != BlockType::kHeader) {
      return Error(blockAt(offset) + ": expected the trace header, found block type " +
                   std::to_string(static_cast<int>(first.header.type)));
    }
    Result<Header> header = decodeHeader(first.payload, options_);
    if (!header) return header.error().context(blockAt(offset) + ": trace header");
    header_ = header.take();
    blocks_.push_back(ChunkRef{offset, first.header.length, BlockType::kHeader, {}, 0, 0, 0});
    offset += kBlockHeaderSize + first.header.length;
    return Status::ok();
  }

  const Header& header() const override { return header_; }
  const Metadata& metadata() const override { return metadata_; }
  const StackTable& stacks() const override { return stacks_; }
  const RecoveryReport& recovery() const override { return recovery_; }
  uint64_t endTime() const override { return end_time_; }
  const std::vector<ChunkRef>& blocks() const override { return blocks_; }

  std::vector<ChunkRef> chunks(EventKind kind, TimeWindow window) const override {
    std::vector<ChunkRef> out;
    for (const auto& ref : blocks_) {
      if (ref.block_type == BlockType::kEventChunk && ref.kind == kind &&
          window.overlaps(ref.min_time, ref.max_time)) {
        out.push_back(ref);
      }
    }
    return out;
  }

  uint64_t rows(EventKind kind) const override {
    auto id = static_cast<size_t>(kind);
    return id < kKindSlots ? rows_[id] : 0;
  }

  Result<Chunk> readChunk(const ChunkRef& ref, ColumnSet columns) const override {
    INCISE_ASSIGN_OR_RETURN(VerifiedBlock block, readChunkBlock(ref));
    Result<ChunkLayout> layout = parseChunk(block.payload, options_);
    if (!layout) return layout.error().context(blockAt(ref.offset));
    uint8_t expected_kind =
        ref.block_type == BlockType::kStackChunk ? kStackTableKind : static_cast<uint8_t>(ref.kind);
    if (layout->kind != expected_kind || layout->rows != ref.rows) {
      return Error(blockAt(ref.offset) + ": chunk holds kind " + std::to_string(layout->kind) +
                   " x " + std::to_string(layout->rows) + " rows, the index says kind " +
                   std::to_string(expected_kind) + " x " + std::to_string(ref.rows));
    }
    Result<Chunk> chunk = decodeChunk(*layout, columns);
    if (!chunk) return chunk.error().context(blockAt(ref.offset));
    stats_.chunks_read.fetch_add(1, std::memory_order_relaxed);
    stats_.bytes_read.fetch_add(kBlockHeaderSize + ref.length, std::memory_order_relaxed);
    return chunk;
  }

  Result<std::vector<ColumnSize>> columnSizes(const ChunkRef& ref) const override {
    INCISE_ASSIGN_OR_RETURN(VerifiedBlock block, readChunkBlock(ref));
    Result<ChunkLayout> layout = parseChunk(block.payload, options_);
    if (!layout) return layout.error().context(blockAt(ref.offset));
    std::vector<ColumnSize> sizes;
    for (const auto& c : layout->columns) {
      sizes.push_back(ColumnSize{c.id, c.encoding, c.compression, c.raw_bytes, c.stored_bytes});
    }
    return sizes;
  }

  const ReaderStats& stats() const override { return stats_; }

 private:
  Result<VerifiedBlock> readChunkBlock(const ChunkRef& ref) const {
    if (ref.block_type != BlockType::kEventChunk && ref.block_type != BlockType::kStackChunk) {
      return Error(blockAt(ref.offset) + ": not a chunk block");
    }
    Result<VerifiedBlock> block = readVerifiedBlock(file_, ref.offset, file_.size);
    if (!block) return block.error();
    if (block->header.type != ref.block_type || block->header.length != ref.length) {
      return Error(blockAt(ref.offset) + ": block type or length differs from the index");
    }
    return block;
  }

  // Decodes the requested columns; a stack chunk's frames column holds the
  // sum of its frame counts, every other column exactly `rows` values. Rows
  // stored grouped by cpu come back in appended order (format/row_order.h).
  Result<Chunk> decodeChunk(const ChunkLayout& layout, ColumnSet wanted) const {
    bool stack_table = layout.kind == kStackTableKind;
    uint16_t column_count = 2;
    const KindSpec* spec = nullptr;
    if (!stack_table) {
      spec = kindSpec(static_cast<EventKind>(layout.kind));
      if (spec == nullptr) return Error("unknown event kind " + std::to_string(layout.kind));
      column_count = spec->column_count;
    }
    std::optional<TimeAndCpu> by;
    if (layout.row_order == static_cast<uint8_t>(RowOrder::kGroupedByCpu)) {
      by = groupingColumns(layout.kind);
      if (!by)
        return Error("rows grouped by cpu in a chunk of kind " + std::to_string(layout.kind));
    } else if (layout.row_order != static_cast<uint8_t>(RowOrder::kAppended)) {
      return Error("unknown row order " + std::to_string(layout.row_order));
    }
    Chunk chunk(static_cast<EventKind>(layout.kind), layout.rows);
    auto& columns = chunk.mutableColumns();
    columns.resize(column_count);
    // A column stored against its base (Encoding::kBaseDelta) needs the base.
    uint64_t bases = 0;
    for (const ColumnInfo& info : layout.columns) {
      if (info.encoding != Encoding::kBaseDelta || !wanted.has(info.id)) continue;
      std::optional<uint16_t> base = baseColumn(layout.kind, info.id);
      const ColumnInfo* base_info = base ? layout.column(*base) : nullptr;
      if (base_info == nullptr || base_info->encoding == Encoding::kBaseDelta ||
          *base >= column_count) {
        return Error("column " + std::to_string(info.id) +
                     ": stored against a base column the chunk does not have");
      }
      bases |= uint64_t{1} << *base;
    }
    auto is_base = [&](uint16_t id) { return id < 64 && ((bases >> id) & 1) != 0; };
    std::string scratch;
    for (uint16_t id = 0; id < column_count; ++id) {
      bool frames = stack_table && id == static_cast<uint16_t>(StackColumn::kFrames);
      bool order_key = by && (id == by->time || id == by->cpu);
      if (!wanted.has(id) && !frames && !order_key && !is_base(id)) continue;
      const ColumnInfo* info = layout.column(id);
      if (info == nullptr) {
        if (order_key) return Error("rows grouped by cpu without column " + std::to_string(id));
        continue;  // an older writer's chunk: reads as empty
      }
      size_t values = layout.rows;
      if (frames) {
        INCISE_ASSIGN_OR_RETURN(size_t total, frameTotal(columns[0]));
        values = total;
        if (!wanted.has(id)) continue;
      }
      bool declared_bytes = spec != nullptr && spec->columns[id].encoding == Encoding::kBytes;
      if (info->encoding == Encoding::kBytes && !stack_table) {
        // Stack copies would have to move with their rows; the writer never groups those.
        if (by)
          return Error("column " + std::to_string(id) + ": byte blobs in rows grouped by cpu");
        DecodedBlobs blobs;
        INCISE_RETURN_IF_ERROR(decodeBytesColumn(layout, *info, values, columns[id], blobs));
        chunk.setBlobs(id, std::move(blobs.buffer), blobs.blobs_at, blobs.blobs_size);
      } else {
        INCISE_RETURN_IF_ERROR(decodeColumn(layout, *info, values, columns[id], scratch));
        if (declared_bytes && !columns[id].empty() && columns[id].front() != 0) {
          return Error("column " + std::to_string(id) + ": blob lengths without blobs");
        }
      }
      stats_.columns_decompressed.fetch_add(1, std::memory_order_relaxed);
    }
    for (const ColumnInfo& info : layout.columns) {
      if (info.encoding != Encoding::kBaseDelta || info.id >= column_count ||
          columns[info.id].empty())
        continue;
      const std::vector<uint64_t>& base = columns[*baseColumn(layout.kind, info.id)];
      std::vector<uint64_t>& values = columns[info.id];
      if (base.size() != values.size())
        return Error("column " + std::to_string(info.id) + ": its base column has other rows");
      for (size_t row = 0; row < values.size(); ++row) values[row] += base[row];
    }
    if (by) {
      std::vector<uint32_t> order = appendedOrder(columns[by->time], columns[by->cpu]);
      for (auto& column : columns) applyOrder(order, column);
      if (!wanted.has(by->time)) columns[by->time] = {};
      if (!wanted.has(by->cpu)) columns[by->cpu] = {};
    }
    for (uint16_t id = 0; id < column_count; ++id) {
      if (is_base(id) && !wanted.has(id)) columns[id] = {};
    }
    return chunk;
  }

  static Result<size_t> frameTotal(const std::vector<uint64_t>& counts) {
    uint64_t total = 0;
    for (uint64_t c : counts) {
      if (c > codecs::kMaxRawColumnBytes || total + c > codecs::kMaxRawColumnBytes) {
        return Error("stack frame counts add up past any plausible size");
      }
      total += c;
    }
    return static_cast<size_t>(total);
  }

  Result<FooterIndex> readFooter(uint64_t first_block) {
    if (file_.size < first_block + kBlockHeaderSize + kTrailerSize) {
      return Error("no trailer: the file ends after " + std::to_string(file_.size) + " bytes");
    }
    uint64_t trailer_at = file_.size - kTrailerSize;
    uint8_t trailer[kTrailerSize];
    INCISE_RETURN_IF_ERROR(preadAll(file_.fd.get(), trailer_at, trailer, file_.path));
    if (std::memcmp(trailer + 8, kTrailerMagic, sizeof(kTrailerMagic)) != 0) {
      return Error("no trailer at the end of the file (recording cut short?)");
    }
    uint64_t footer_at = getU64(trailer);
    if (footer_at < first_block || footer_at >= trailer_at) {
      return Error("trailer points at offset " + std::to_string(footer_at) +
                   ", outside the file's blocks");
    }
    Result<VerifiedBlock> block = readVerifiedBlock(file_, footer_at, trailer_at);
    if (!block) return block.error().context("footer");
    if (block->header.type != BlockType::kFooter ||
        footer_at + kBlockHeaderSize + block->header.length != trailer_at) {
      return Error(blockAt(footer_at) + ": the trailer does not point at a footer");
    }
    ByteSpan footer_words = block->payload;
    std::string unpacked;
    if (header_.format_major > 1) {
      // An index entry packs to 20-30 bytes; 64x and a page more is room to spare.
      Result<std::string> words = unpackWords(footer_words, 64 * footer_words.size() + 4096);
      if (!words) return words.error().context(blockAt(footer_at) + ": footer");
      unpacked = words.take();
      footer_words = codecs::asBytes(unpacked);
    }
    auto parsed = readMessage(
        footer_words, options_, [&](capnp::MessageReader& message) -> Result<FooterIndex> {
          auto footer = message.getRoot<schema::Footer>();
          FooterIndex out;
          out.end_mono_ns = footer.getEndMonoNs();
          for (auto e : footer.getChunks()) {
            ChunkRef ref{e.getOffset(),
                         e.getLength(),
                         static_cast<BlockType>(e.getBlockType()),
                         static_cast<EventKind>(e.getKind()),
                         e.getRows(),
                         e.getMinTime(),
                         e.getMaxTime()};
            if (ref.offset < sizeof(kFileMagic) || ref.offset > footer_at ||
                footer_at - ref.offset < kBlockHeaderSize + uint64_t{ref.length}) {
              return Error("index entry for offset " + std::to_string(ref.offset) +
                           " lies outside the file's blocks");
            }
            out.blocks.push_back(ref);
          }
          return out;
        });
    if (!parsed) return parsed.error().context(blockAt(footer_at) + ": footer");
    if (!*parsed) return parsed->error().context(blockAt(footer_at) + ": footer");
    return parsed->take();
  }

  // Loads metadata and stacks listed in the footer; any failure sends the
  // caller to a scan.
  Status loadFromIndex(const FooterIndex& index) {
    for (const auto& ref : index.blocks) {
      if (ref.block_type == BlockType::kHeader) continue;
      if (ref.block_type == BlockType::kMetadata || ref.block_type == BlockType::kStackChunk) {
        INCISE_ASSIGN_OR_RETURN(VerifiedBlock block,
                                readVerifiedBlock(file_, ref.offset, file_.size));
        INCISE_RETURN_IF_ERROR(loadBlock(ref.offset, block.header, block.payload));
      } else {
        blocks_.push_back(ref);
      }
    }
    end_time_ = index.end_mono_ns;
    return Status::ok();
  }

  void resetLoaded() {
    blocks_.resize(recovery_.header_lost ? 0 : 1);  // keep the header block
    metadata_ = Metadata();
    stacks_ = StackTable();
  }

  Status scan(uint64_t start) {
    std::vector<Damage> damage;
    INCISE_RETURN_IF_ERROR(scanBlocks(
        file_, start,
        [&](uint64_t offset, const BlockHeader& header, ByteSpan payload) -> Status {
          Status s = loadBlock(offset, header, payload);
          if (s) {
            ++recovery_.blocks_salvaged;
            recovery_.bytes_salvaged += kBlockHeaderSize + header.length;
          }
          return s;
        },
        damage, &recovery_.regions_from_copies));
    recovery_.damage.insert(recovery_.damage.end(), damage.begin(), damage.end());
    return Status::ok();
  }

  // Takes one verified block into the reader's state.
  Status loadBlock(uint64_t offset, const BlockHeader& header, ByteSpan payload) {
    ChunkRef ref{offset, header.length, header.type, {}, 0, 0, 0};
    switch (header.type) {
      case BlockType::kHeader:
        return Error(blockAt(offset) + (offset == sizeof(kFileMagic)
                                            ? ": the trace header does not decode"
                                            : ": a second trace header"));
      case BlockType::kFooter:
        return Status::ok();  // a scan rebuilds the index itself
      case BlockType::kRegionCopy:
        return Error(blockAt(offset) + ": a region copy where only a scan opens one");
      case BlockType::kMetadata: {
        std::string unpacked;
        if (header_.format_minor >= kFirstMinorWithPackedMetadata || header_.format_major > 1) {
          Result<std::string> message = unpackMessage(payload);
          if (!message) return message.error().context(blockAt(offset) + ": metadata");
          unpacked = message.take();
          payload = codecs::asBytes(unpacked);
        }
        Result<MetadataDelta> delta = decodeMetadata(payload, options_);
        if (!delta) return delta.error().context(blockAt(offset) + ": metadata");
        mergeMetadata(metadata_, delta.take());
        break;
      }
      case BlockType::kStackChunk: {
        INCISE_RETURN_IF_ERROR(loadStacks(offset, payload, ref));
        break;
      }
      case BlockType::kEventChunk: {
        Result<ChunkLayout> layout = parseChunk(payload, options_);
        if (!layout) return layout.error().context(blockAt(offset));
        if (!isEventKind(layout->kind)) {
          return Error(blockAt(offset) + ": unknown event kind " + std::to_string(layout->kind));
        }
        ref.kind = static_cast<EventKind>(layout->kind);
        ref.rows = layout->rows;
        ref.min_time = layout->min_time;
        ref.max_time = layout->max_time;
        break;
      }
    }
    blocks_.push_back(ref);
    return Status::ok();
  }

  Status loadStacks(uint64_t offset, ByteSpan payload, ChunkRef& ref) {
    Result<ChunkLayout> layout = parseChunk(payload, options_);
    if (!layout) return layout.error().context(blockAt(offset));
    if (layout->kind != kStackTableKind) return Error(blockAt(offset) + ": not a stack table");
    if (layout->first_stack_id == 0 || layout->first_stack_id <= stacks_.maxId() ||
        layout->first_stack_id - stacks_.maxId() > kMaxStackIdGap ||
        layout->first_stack_id > kStackIdSlack + kStackIdsPerFileByte * file_.size ||
        layout->first_stack_id > UINT64_MAX - layout->rows) {
      return Error(blockAt(offset) + ": stack ids from " + std::to_string(layout->first_stack_id) +
                   " do not follow the " + std::to_string(stacks_.maxId()) + " already read");
    }
    Result<Chunk> chunk = decodeChunk(*layout, ColumnSet::all());
    if (!chunk) return chunk.error().context(blockAt(offset) + ": stack table");
    auto counts = chunk->column(StackColumn::kFrameCount);
    auto frames = chunk->column(StackColumn::kFrames);
    uint64_t counted = 0;
    for (uint64_t count : counts) {
      if (count > frames.size() - counted) {
        return Error(blockAt(offset) + ": stack table frame counts exceed its " +
                     std::to_string(frames.size()) + " frames");
      }
      counted += count;
    }
    // The decoded frames column becomes the table's block for these stacks, uncopied.
    std::vector<uint64_t> frame_column;
    auto& columns = chunk->mutableColumns();
    const auto frames_index = static_cast<size_t>(StackColumn::kFrames);
    if (frames_index < columns.size()) frame_column = std::move(columns[frames_index]);
    stacks_.appendChunk(layout->first_stack_id, counts, std::move(frame_column));
    ref.rows = layout->rows;
    return Status::ok();
  }

  TraceFile file_;
  ReaderOptions options_;
  Header header_;
  Metadata metadata_;
  StackTable stacks_;
  RecoveryReport recovery_;
  uint64_t end_time_ = 0;
  std::vector<ChunkRef> blocks_;
  uint64_t rows_[kKindSlots] = {};
  mutable ReaderStats stats_;
};

}  // namespace

Result<std::unique_ptr<Reader>> Reader::open(const std::string& path,
                                             const ReaderOptions& options) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error("cannot open " + path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    return Error("cannot stat " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Error(path + " is not a regular file");
  auto reader = std::make_unique<ReaderImpl>(
      TraceFile{std::move(fd), path, static_cast<uint64_t>(st.st_size)}, options);
  INCISE_RETURN_IF_ERROR(reader->open());
  return std::unique_ptr<Reader>(std::move(reader));
}

}  // namespace incise::format
