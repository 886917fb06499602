// The trace writer: chunk builders on the caller's thread, encoding,
// compression and writes on a background thread behind a bounded queue.
#include "format/writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <variant>

#include "base/unique_fd.h"
#include "format/block_io.h"
#include "format/capnp_message.h"
#include "format/chunk_builder.h"
#include "format/message_payload.h"
#include "format/metadata_codec.h"
#include "format/region_merge.h"
#include "format/region_rewrite.h"
#include "format/stack_interner.h"
#include "schemas/trace.capnp.h"

namespace incise::format {
namespace {

constexpr size_t kKindSlots = kAllEventKinds.size() + 1;  // EventKind ids are 1..N

// Metadata is mostly symbol names, which a higher zstd level stores smaller
// than level 3. Level 12 keeps ~85% of level 19's saving on such text (256 KiB
// of symbol names: 29.3 KB at level 3, 22.9 KB at 12, 21.7 KB at 19) at a
// tenth of its CPU (~7 MB/s against ~0.8 MB/s on a 2-CPU machine): level 19 on the first
// 256 KiB was a tenth of a short system-wide recording's whole CPU. The first
// kHighLevelMetadataBytes of a recording's metadata messages get it: all of a
// short recording's (~20 KB); the megabytes of first sightings of a
// system-wide recording get the chunks' level after that.
constexpr int kHighMetadataZstdLevel = 12;
constexpr uint64_t kHighLevelMetadataBytes = 256u << 10;
// The last merge encodes a region's small deltas again as one message: at
// kHighMetadataZstdLevel up to this size.
constexpr uint64_t kHighLevelMergedMetadataBytes = 64u << 10;

// What a merge region may keep in memory (values of its small chunks, its
// small metadata deltas) before it is merged; the recorder's memory budget
// is 64 MiB.
constexpr uint64_t kMergeRegionBytes = 4u << 20;

using Job = std::variant<SealedChunk, MetadataDelta>;

class WriterImpl final : public Writer {
 public:
  WriterImpl(UniqueFd fd, std::string path, const WriterOptions& options, bool can_rewrite)
      : fd_(std::move(fd)),
        path_(std::move(path)),
        options_(options),
        interner_(options.max_interned_stacks),
        seekable_(can_rewrite),
        merging_(options.merge_small_chunks && can_rewrite),
        region_(MergeLimits{.rows_per_chunk = std::max<uint32_t>(options.rows_per_chunk, 1),
                            .blob_bytes = options.max_chunk_blob_bytes,
                            .held_bytes = kMergeRegionBytes,
                            .frames_per_stack_chunk = uint64_t{options.rows_per_chunk} * 16}) {
    if (options_.rows_per_chunk == 0) options_.rows_per_chunk = 1;
    if (options_.queue_depth == 0) options_.queue_depth = 1;
    for (EventKind kind : kAllEventKinds) {
      builders_[static_cast<size_t>(kind)] = ChunkBuilder(kind, options_.rows_per_chunk);
    }
    stacks_ = ChunkBuilder::stackTable(options_.rows_per_chunk);
  }

  ~WriterImpl() override { stopWorker(); }

  Status start(const Header& header) {
    INCISE_RETURN_IF_ERROR(writeRaw(
        codecs::ByteSpan(reinterpret_cast<const uint8_t*>(kFileMagic), sizeof(kFileMagic))));
    std::string payload = encodeHeader(header);
    INCISE_RETURN_IF_ERROR(writeBlock(BlockType::kHeader, codecs::asBytes(payload), {}));
    region_.restart(offset_);
    if (options_.background) worker_ = std::thread([this] { workerLoop(); });
    return Status::ok();
  }

#define INCISE_PUSH(field, encoding, doc) b.column(column++).push_back(row.field);
#define INCISE_X(enumerator, id, Struct, COLUMNS, doc)  \
  void pushValues(ChunkBuilder& b, const Struct& row) { \
    size_t column = 0;                                  \
    COLUMNS(INCISE_PUSH)                                \
  }                                                     \
  void append(const Struct& row) override {             \
    pushValues(builders_[id], row);                     \
    rowDone(id);                                        \
  }
  INCISE_EVENT_KINDS(INCISE_X)
#undef INCISE_X
#undef INCISE_PUSH

  void append(const CpuSample& row, std::span<const uint8_t> user_stack) override {
    constexpr size_t id = static_cast<size_t>(EventKind::kCpuSample);
    ChunkBuilder& b = builders_[id];
    pushValues(b, row);
    b.attachBytes(static_cast<size_t>(CpuSampleColumn::user_stack), user_stack);
    rowDone(id);
  }

  void rowDone(size_t id) {
    ChunkBuilder& b = builders_[id];
    b.rowAdded();
    ++rows_[id];
    if (b.rows() >= options_.rows_per_chunk || b.blobBytes() >= options_.max_chunk_blob_bytes)
      sealKind(id);
  }

  InternedStack intern(std::span<const uint64_t> frames) override {
    if (frames.empty()) return {};
    auto [id, fresh] = interner_.intern(frames);
    if (fresh) {
      if (stacks_.rows() == 0) first_pending_stack_ = id;
      stacks_.column(static_cast<size_t>(StackColumn::kFrameCount)).push_back(frames.size());
      auto& all = stacks_.column(static_cast<size_t>(StackColumn::kFrames));
      all.insert(all.end(), frames.begin(), frames.end());
      stacks_.rowAdded();
      ++stacks_written_;
      frames_written_ += frames.size();
      // Bound the pending table by rows and by frames.
      if (stacks_.rows() >= options_.rows_per_chunk ||
          all.size() >= size_t{options_.rows_per_chunk} * 16) {
        sealStacks();
      }
    }
    return {.id = id, .is_new = fresh};
  }

  void addMetadata(MetadataDelta delta) override {
    pending_metadata_.push_back(std::move(delta));
  }

  Status flush() override {
    if (closed_) return Error("writer for " + path_ + " is closed");
    sealStacks();
    for (auto& delta : pending_metadata_) enqueue(std::move(delta));
    pending_metadata_.clear();
    for (size_t id = 1; id < kKindSlots; ++id) {
      if (builders_[id].rows() > 0) sealKind(id);
    }
    waitIdle();
    return status();
  }

  Status close(uint64_t end_mono_ns) override {
    if (closed_) return Error("writer for " + path_ + " is closed");
    Status flushed = flush();
    closed_ = true;
    stopWorker();
    if (flushed) flushed = mergeRegion(/*closing=*/true);
    if (flushed) flushed = writeFooter(end_mono_ns);
    // Closed here, not by the owner: close() can report a write-back error.
    if (::close(fd_.release()) != 0 && flushed) {
      flushed = Error("closing " + path_ + ": " + std::strerror(errno));
    }
    return flushed;
  }

  Status status() const override {
    std::lock_guard lock(mutex_);
    return error_ ? Status(*error_) : Status::ok();
  }

  WriterStats stats() const override {
    std::lock_guard lock(mutex_);
    WriterStats s = stats_;
    std::copy(std::begin(rows_), std::end(rows_), std::begin(s.rows));
    s.stacks = stacks_written_;
    s.frames = frames_written_;
    return s;
  }

 private:
  void sealStacks() {
    if (stacks_.rows() == 0) return;
    enqueue(stacks_.seal(first_pending_stack_));
  }

  void sealKind(size_t id) {
    sealStacks();  // stacks an event chunk refers to are always earlier in the file
    enqueue(builders_[id].seal());
  }

  void enqueue(Job job) {
    if (!options_.background) {
      process(std::move(job));
      return;
    }
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return queue_.size() < options_.queue_depth; });
    queue_.push_back(std::move(job));
    not_empty_.notify_one();
  }

  void waitIdle() {
    if (!options_.background) return;
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
  }

  void stopWorker() {
    if (!worker_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    not_empty_.notify_one();
    worker_.join();
  }

  void workerLoop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      not_empty_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      Job job = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      not_full_.notify_one();
      lock.unlock();
      process(std::move(job));
      lock.lock();
      busy_ = false;
      if (queue_.empty()) idle_.notify_all();
    }
  }

  // Encodes and writes one job; after the first error, jobs are dropped.
  void process(Job job) {
    if (!status()) return;
    Status s;
    bool small = false;  // merged later (format/region_merge.h)
    if (auto* chunk = std::get_if<SealedChunk>(&job)) {
      s = encodeChunk(*chunk, options_.zstd_level, encoded_);
      if (s) {
        BlockType type =
            chunk->kind == kStackTableKind ? BlockType::kStackChunk : BlockType::kEventChunk;
        buildBlock(type, codecs::asBytes(encoded_.payload));
        small = region_.isSmall(*chunk);
        if (merging_ && (!small || !region_.fits(*chunk))) s = mergeRegion();
      }
      if (s) {
        s = writeBuiltBlock(IndexEntry{.kind = chunk->kind,
                                       .rows = chunk->rows,
                                       .min_time = chunk->min_time,
                                       .max_time = chunk->max_time});
      }
      if (s) {
        std::lock_guard lock(mutex_);
        stats_.raw_column_bytes += encoded_.raw_bytes;
        stats_.stored_column_bytes += encoded_.stored_bytes;
        if (chunk->kind < kKindSlots) totals_[chunk->kind] += chunk->rows;
      }
      if (s && merging_ && small) region_.add(*chunk);
    } else {
      MetadataDelta& delta = std::get<MetadataDelta>(job);
      std::string message = encodeMetadata(delta);
      bool high = high_level_metadata_bytes_ + message.size() <= kHighLevelMetadataBytes;
      if (high) high_level_metadata_bytes_ += message.size();
      std::string payload = metadataPayload(message, high);
      buildBlock(BlockType::kMetadata, codecs::asBytes(payload));
      small = MergeRegion::isSmallMetadata(message.size());
      if (merging_ && (!small || !region_.fitsMetadata(message.size()))) s = mergeRegion();
      if (s) s = writeBuiltBlock({});
      if (s && merging_ && small) region_.addMetadata(std::move(delta), message.size());
    }
    // A large block is written once, outside any region.
    if (s && merging_ && !small) region_.restart(offset_);
    if (!s) setError(s.error());
  }

  // Rewrites the region written since the last merge with one chunk per kind
  // (format/region_merge.h, format/region_rewrite.h).
  Status mergeRegion(bool closing = false) {
    if (!merging_) return Status::ok();
    uint64_t start = region_.start();
    uint64_t end = offset_;
    if (!region_.worthMerging()) {
      region_.restart(end);
      return Status::ok();
    }
    MergedRegion merged;
    // Merged small deltas at kHighMetadataZstdLevel only once the recording is over: a
    // recording's first region holds its start-up metadata, and encoding
    // that again at the high level mid-run was most of a merge's CPU.
    auto encode_metadata = [&](const MetadataDelta& delta) {
      std::string message = encodeMetadata(delta);
      return metadataPayload(message, closing && message.size() <= kHighLevelMergedMetadataBytes);
    };
    Status encoded = region_.merge(options_.zstd_level, encode_metadata, merged);
    region_.restart(end);
    if (!encoded) return encoded;
    if (merged.blocks.size() >= end - start) return Status::ok();  // nothing to gain

    INCISE_ASSIGN_OR_RETURN(RegionRewrite done,
                            rewriteRegion(fd_.get(), path_, start, end, merged, index_));
    if (!done.keep_merging) merging_ = false;
    if (!done.rewritten) return Status::ok();
    offset_ = done.next_offset;
    region_.restart(offset_);
    std::lock_guard lock(mutex_);
    stats_.bytes_written = offset_;
    stats_.blocks = index_.size();
    ++stats_.region_merges;
    return Status::ok();
  }

  // A metadata block's payload: zstd at kHighMetadataZstdLevel when `high`, else at the chunks'
  // level.
  std::string metadataPayload(const std::string& message, bool high) const {
    return packMessage(message, high ? std::max(options_.zstd_level, kHighMetadataZstdLevel)
                                     : options_.zstd_level);
  }

  void setError(const Error& e) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = e;
  }

  Status writeRaw(codecs::ByteSpan bytes) {
    Status s =
        seekable_ ? pwriteAll(fd_.get(), offset_, bytes, path_) : writeAll(fd_.get(), bytes, path_);
    if (s) {
      offset_ += bytes.size();
      std::lock_guard lock(mutex_);
      stats_.bytes_written = offset_;
    }
    return s;
  }

  // The block's header and payload, in block_.
  void buildBlock(BlockType type, codecs::ByteSpan payload) {
    auto header = encodeBlockHeader(type, payload);
    block_.assign(header.begin(), header.end());
    block_.insert(block_.end(), payload.begin(), payload.end());
  }

  // Appends block_ in one write (a crash leaves at most one partial block)
  // and indexes it as `entry`.
  Status writeBuiltBlock(IndexEntry entry) {
    if (block_.size() - kBlockHeaderSize > kMaxBlockPayload) {
      return Error("block of " + std::to_string(block_.size() - kBlockHeaderSize) +
                   " bytes exceeds the limit");
    }
    entry.offset = offset_;
    entry.length = static_cast<uint32_t>(block_.size() - kBlockHeaderSize);
    entry.type = static_cast<BlockType>(block_[4]);
    INCISE_RETURN_IF_ERROR(writeRaw(block_));
    index_.push_back(entry);
    std::lock_guard lock(mutex_);
    ++stats_.blocks;
    return Status::ok();
  }

  Status writeBlock(BlockType type, codecs::ByteSpan payload, IndexEntry entry) {
    buildBlock(type, payload);
    return writeBuiltBlock(entry);
  }

  Status writeFooter(uint64_t end_mono_ns) {
    capnp::MallocMessageBuilder message;
    auto footer = message.initRoot<schema::Footer>();
    auto chunks = footer.initChunks(static_cast<unsigned>(index_.size()));
    for (size_t i = 0; i < index_.size(); ++i) {
      const IndexEntry& e = index_[i];
      auto c = chunks[static_cast<unsigned>(i)];
      c.setOffset(e.offset);
      c.setLength(e.length);
      c.setBlockType(static_cast<uint8_t>(e.type));
      c.setKind(e.kind);
      c.setRows(e.rows);
      c.setMinTime(e.min_time);
      c.setMaxTime(e.max_time);
    }
    unsigned kinds = 0;
    for (size_t id = 1; id < kKindSlots; ++id) kinds += totals_[id] > 0;
    auto totals = footer.initTotals(kinds);
    unsigned t = 0;
    for (size_t id = 1; id < kKindSlots; ++id) {
      if (totals_[id] == 0) continue;
      totals[t].setKind(static_cast<uint8_t>(id));
      totals[t].setRows(totals_[id]);
      ++t;
    }
    footer.setEndMonoNs(end_mono_ns);
    footer.setStackCount(interner_.lastId());
    std::string payload = packedMessage(message);
    uint64_t footer_offset = offset_;
    INCISE_RETURN_IF_ERROR(writeBlock(BlockType::kFooter, codecs::asBytes(payload), {}));
    uint8_t trailer[kTrailerSize];
    putU64(trailer, footer_offset);
    std::memcpy(trailer + 8, kTrailerMagic, sizeof(kTrailerMagic));
    return writeRaw(codecs::ByteSpan(trailer, sizeof(trailer)));
  }

  UniqueFd fd_;
  std::string path_;
  WriterOptions options_;
  bool closed_ = false;

  // Caller's thread.
  ChunkBuilder builders_[kKindSlots];
  ChunkBuilder stacks_;
  StackInterner interner_;
  uint64_t first_pending_stack_ = 0;
  uint64_t rows_[kKindSlots] = {};
  uint64_t stacks_written_ = 0;
  uint64_t frames_written_ = 0;
  std::vector<MetadataDelta> pending_metadata_;

  // Worker thread (or the caller's when background is false).
  EncodedChunk encoded_;
  std::vector<uint8_t> block_;
  uint64_t offset_ = 0;
  uint64_t high_level_metadata_bytes_ = 0;  // metadata compressed at kHighMetadataZstdLevel
  std::vector<IndexEntry> index_;
  uint64_t totals_[kKindSlots] = {};
  bool seekable_;  // a regular file, written with pwrite; else a stream (a pipe)
  bool merging_;   // off for a file that cannot be rewritten, and after a failed merge
  MergeRegion region_;

  // Shared, under mutex_.
  mutable std::mutex mutex_;
  std::condition_variable not_full_, not_empty_, idle_;
  std::deque<Job> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::optional<Error> error_;
  WriterStats stats_;
  std::thread worker_;
};

}  // namespace

Result<std::unique_ptr<Writer>> Writer::create(const std::string& path, const Header& header,
                                               const WriterOptions& options) {
  // O_NOFOLLOW: a symlink planted at `path` does not redirect the write.
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return Error("cannot create " + path + ": " + std::strerror(errno));
  // O_CREAT's mode does not apply to a file that already existed.
  struct stat st;
  if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) != 0600 &&
      ::fchmod(fd.get(), 0600) != 0)
    return Error("cannot make " + path + " private (mode 0600): " + std::strerror(errno));
  return create(fd.release(), path, header, options);
}

Result<std::unique_ptr<Writer>> Writer::create(int raw_fd, const std::string& name,
                                               const Header& header, const WriterOptions& options) {
  UniqueFd fd(raw_fd);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    return Error("cannot stat " + name + ": " + std::strerror(errno));
  // A merge rewrites the end of the file in place: only a regular file can.
  // Anything else (a pipe) is written as a stream.
  bool regular = S_ISREG(st.st_mode);
  auto writer = std::make_unique<WriterImpl>(std::move(fd), name, options, regular);
  INCISE_RETURN_IF_ERROR(writer->start(header));
  return std::unique_ptr<Writer>(std::move(writer));
}

}  // namespace incise::format
