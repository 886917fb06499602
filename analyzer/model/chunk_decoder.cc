#include "analyzer/model/chunk_decoder.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "analyzer/model/progress.h"

namespace incise::analyzer {
namespace {

using Prepared = ChunkDecoder::Prepared;

// Unwinding is not cheap per row, so a `prepare` keeps the workers whatever
// the number of rows.
bool worthWorkers(const std::vector<format::ChunkRef>& refs, bool prepares,
                  uint64_t parallel_rows) {
  if (refs.size() <= 1) return false;
  if (prepares) return true;
  uint64_t rows = 0;
  for (const auto& ref : refs) rows += ref.rows;
  return rows >= parallel_rows;
}

struct Decoded {
  Result<format::Chunk> chunk;
  std::unique_ptr<Prepared> prepared;
};

Decoded decode(const format::Reader& reader, const format::ChunkRef& ref, format::ColumnSet columns,
               const ChunkDecoder::Prepare& prepare, unsigned worker) {
  Decoded decoded{reader.readChunk(ref, columns), nullptr};
  if (decoded.chunk && prepare) decoded.prepared = prepare(*decoded.chunk, worker);
  return decoded;
}

// Shared between the workers and the consumer. Slot i % window holds chunk i
// once decoded; a worker may claim chunk i only while i < delivered + window.
struct Pipeline {
  const format::Reader& reader;
  const std::vector<format::ChunkRef>& refs;
  format::ColumnSet columns;
  const ChunkDecoder::Prepare& prepare;
  size_t window;

  std::mutex mutex;
  std::condition_variable changed;
  size_t next_to_claim = 0;
  size_t delivered = 0;
  bool stopping = false;
  std::vector<std::optional<Decoded>> slots;

  void work(unsigned worker) {
    for (;;) {
      size_t index;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] {
          return stopping || next_to_claim >= refs.size() || next_to_claim < delivered + window;
        });
        if (stopping || next_to_claim >= refs.size()) return;
        index = next_to_claim++;
      }
      Decoded decoded = decode(reader, refs[index], columns, prepare, worker);
      {
        std::lock_guard lock(mutex);
        slots[index % window].emplace(std::move(decoded));
      }
      changed.notify_all();
    }
  }

  Decoded take(size_t index) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return slots[index % window].has_value(); });
    Decoded chunk = std::move(*slots[index % window]);
    slots[index % window].reset();
    ++delivered;
    lock.unlock();
    changed.notify_all();
    return chunk;
  }

  void stop() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    changed.notify_all();
  }
};

void deliver(const format::ChunkRef& ref, Decoded& decoded,
             const ChunkDecoder::ConsumePrepared& consume, const ChunkDecoder::OnError& on_error,
             ProgressBar* progress) {
  if (decoded.chunk) {
    consume(ref, *decoded.chunk, decoded.prepared.get());
  } else if (on_error) {
    on_error(ref, decoded.chunk.error());
  }
  if (progress) progress->advance(ref.rows);
}

}  // namespace

ChunkDecoder::ChunkDecoder(const format::Reader& reader, unsigned threads, uint64_t parallel_rows)
    : reader_(reader),
      threads_(threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency())),
      parallel_rows_(parallel_rows) {}

void ChunkDecoder::run(const std::vector<format::ChunkRef>& refs, format::ColumnSet columns,
                       const Consume& consume, const OnError& on_error,
                       ProgressBar* progress) const {
  run(
      refs, columns, Prepare(),
      [&](const format::ChunkRef& ref, const format::Chunk& chunk, Prepared*) {
        consume(ref, chunk);
      },
      on_error, progress);
}

void ChunkDecoder::run(const std::vector<format::ChunkRef>& refs, format::ColumnSet columns,
                       const Prepare& prepare, const ConsumePrepared& consume,
                       const OnError& on_error, ProgressBar* progress) const {
  if (threads_ <= 1 || !worthWorkers(refs, static_cast<bool>(prepare), parallel_rows_)) {
    for (const auto& ref : refs) {
      Decoded decoded = decode(reader_, ref, columns, prepare, 0);
      deliver(ref, decoded, consume, on_error, progress);
    }
    return;
  }
  Pipeline pipeline{reader_, refs, columns, prepare, size_t{threads_} * 2};
  pipeline.slots.resize(pipeline.window);
  std::vector<std::thread> workers;
  unsigned worker_count = static_cast<unsigned>(std::min<size_t>(threads_, refs.size()));
  for (unsigned i = 0; i < worker_count; ++i) workers.emplace_back([&, i] { pipeline.work(i); });
  // Joins the workers however the loop ends (a consumer may throw).
  struct Joiner {
    Pipeline& pipeline;
    std::vector<std::thread>& workers;
    ~Joiner() {
      pipeline.stop();
      for (auto& w : workers) w.join();
    }
  } joiner{pipeline, workers};
  for (size_t i = 0; i < refs.size(); ++i) {
    Decoded decoded = pipeline.take(i);
    deliver(refs[i], decoded, consume, on_error, progress);
  }
}

}  // namespace incise::analyzer
