#include "analyzer/model/chunk_decoder.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "analyzer/model/progress.h"

namespace incise::analyzer {
namespace {

// Shared between the workers and the consumer. Slot i % window holds chunk i
// once decoded; a worker may claim chunk i only while i < delivered + window.
struct Pipeline {
  const format::Reader& reader;
  const std::vector<format::ChunkRef>& refs;
  format::ColumnSet columns;
  size_t window;

  std::mutex mutex;
  std::condition_variable changed;
  size_t next_to_claim = 0;
  size_t delivered = 0;
  bool stopping = false;
  std::vector<std::optional<Result<format::Chunk>>> slots;

  void work() {
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
      Result<format::Chunk> chunk = reader.readChunk(refs[index], columns);
      {
        std::lock_guard lock(mutex);
        slots[index % window].emplace(std::move(chunk));
      }
      changed.notify_all();
    }
  }

  Result<format::Chunk> take(size_t index) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return slots[index % window].has_value(); });
    Result<format::Chunk> chunk = std::move(*slots[index % window]);
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

void deliver(const format::ChunkRef& ref, Result<format::Chunk>& chunk,
             const ChunkDecoder::Consume& consume, const ChunkDecoder::OnError& on_error,
             ProgressBar* progress) {
  if (chunk) {
    consume(ref, *chunk);
  } else if (on_error) {
    on_error(ref, chunk.error());
  }
  if (progress) progress->advance(ref.rows);
}

}  // namespace

ChunkDecoder::ChunkDecoder(const format::Reader& reader, unsigned threads)
    : reader_(reader),
      threads_(threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency())) {}

void ChunkDecoder::run(const std::vector<format::ChunkRef>& refs, format::ColumnSet columns,
                       const Consume& consume, const OnError& on_error,
                       ProgressBar* progress) const {
  if (threads_ <= 1 || refs.size() <= 1) {
    for (const auto& ref : refs) {
      Result<format::Chunk> chunk = reader_.readChunk(ref, columns);
      deliver(ref, chunk, consume, on_error, progress);
    }
    return;
  }
  Pipeline pipeline{reader_, refs, columns, size_t{threads_} * 2};
  pipeline.slots.resize(pipeline.window);
  std::vector<std::thread> workers;
  unsigned worker_count = static_cast<unsigned>(std::min<size_t>(threads_, refs.size()));
  for (unsigned i = 0; i < worker_count; ++i) workers.emplace_back([&] { pipeline.work(); });
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
    Result<format::Chunk> chunk = pipeline.take(i);
    deliver(refs[i], chunk, consume, on_error, progress);
  }
}

}  // namespace incise::analyzer
