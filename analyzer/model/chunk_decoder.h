// ChunkDecoder: decodes event chunks on a small thread pool and hands them
// back in file order.
//
// Decompression and column decoding are most of a report's time, and
// Reader::readChunk is thread-safe, so workers decode up to `window` chunks
// ahead of the consumer while the consumer (the calling thread) aggregates
// the chunk before. Memory stays bounded by `window` decoded chunks.
// Chunks that fail to decode are reported to `on_error` and skipped, so a
// damaged chunk costs its rows, not the report.
//
//   ChunkDecoder decoder(reader, /*threads=*/0);   // 0: hardware_concurrency
//   decoder.run(reader.chunks(EventKind::kCpuSample), ColumnSet::all(),
//               [&](const format::ChunkRef& ref, const format::Chunk& chunk) { ... },
//               [&](const format::ChunkRef& ref, const Error& e) { ++damaged; });
//
// Work that needs no order (offline unwinding of a chunk's samples) can run
// on the decoding threads too: `prepare` is called there, with the worker's
// index, right after a chunk is decoded, and its result reaches `consume`
// with the chunk.
//
//   decoder.run(refs, columns,
//               [&](format::Chunk& c, unsigned worker) { return unwindAll(c, worker); },
//               [&](const format::ChunkRef&, const format::Chunk& c, ChunkDecoder::Prepared* p) {
//                 ...
//               }, on_error);
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "format/reader.h"

namespace incise::analyzer {

class ProgressBar;

class ChunkDecoder {
 public:
  using Consume = std::function<void(const format::ChunkRef&, const format::Chunk&)>;
  using OnError = std::function<void(const format::ChunkRef&, const Error&)>;
  // What `prepare` made of one chunk; owned by the decoder until consumed.
  struct Prepared {
    virtual ~Prepared() = default;
  };
  // Called on a decoding thread; `worker` < threads(), and one worker index
  // is never used by two threads at once. It may release what only it needs
  // (Chunk::releaseBlobs), so fewer big buffers are alive at once.
  using Prepare = std::function<std::unique_ptr<Prepared>(format::Chunk&, unsigned worker)>;
  using ConsumePrepared =
      std::function<void(const format::ChunkRef&, const format::Chunk&, Prepared*)>;

  // Below this many rows (a few ms of decoding) the calling thread decodes
  // alone: starting workers and handing chunks over cost a small report more
  // than they save (incise top on a 60 k-sample trace, box busy: 21 -> 15 ms
  // task-clock and 30 -> 17 ms wall with one thread).
  static constexpr uint64_t kParallelRows = uint64_t{1} << 20;

  explicit ChunkDecoder(const format::Reader& reader, unsigned threads = 0,
                        uint64_t parallel_rows = kParallelRows);

  unsigned threads() const { return threads_; }
  // Calls `consume` (or `on_error`) once per ref, in the order of `refs`, on
  // the calling thread. `progress`, when given, advances by each chunk's rows.
  void run(const std::vector<format::ChunkRef>& refs, format::ColumnSet columns,
           const Consume& consume, const OnError& on_error, ProgressBar* progress = nullptr) const;
  void run(const std::vector<format::ChunkRef>& refs, format::ColumnSet columns,
           const Prepare& prepare, const ConsumePrepared& consume, const OnError& on_error,
           ProgressBar* progress = nullptr) const;

 private:
  const format::Reader& reader_;
  unsigned threads_;
  uint64_t parallel_rows_;
};

}  // namespace incise::analyzer
