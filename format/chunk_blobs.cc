// Chunk's byte-blob columns (Encoding::kBytes): per-row spans of one pooled
// buffer, the decompressed column itself.
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>

#include "format/chunk.h"

namespace incise::format {
namespace {

// A few buffers of the sizes recent chunks needed. The decoder keeps a
// bounded window of chunks alive, so a handful covers a whole stream.
class BlobBufferPool {
 public:
  static constexpr size_t kPopulateAtLeast = 64 * 1024;
  std::shared_ptr<uint8_t[]> acquire(size_t size) {
    Buffer buffer;
    {
      std::lock_guard lock(mutex_);
      size_t best = free_.size();
      for (size_t i = 0; i < free_.size(); ++i) {
        if (free_[i].capacity >= size &&
            (best == free_.size() || free_[i].capacity < free_[best].capacity))
          best = i;
      }
      if (best != free_.size()) {
        buffer = std::move(free_[best]);
        free_.erase(free_.begin() + static_cast<ptrdiff_t>(best));
      }
    }
    if (!buffer.bytes) {
      // Rounded up so chunks of slightly different sizes share buffers; in
      // huge pages where the kernel allows (a page fault per 4 KiB of a fresh
      // 8 MiB chunk was a fifth of an unwinding report). Not zero-filled:
      // decompression fills it.
      size_t granule = size >= kHugePage ? kHugePage : kGranule;
      buffer.capacity = std::max((size + granule - 1) / granule * granule, granule);
      buffer.bytes.reset(static_cast<uint8_t*>(std::aligned_alloc(granule, buffer.capacity)));
      if (!buffer.bytes) throw std::bad_alloc();
      if (granule == kHugePage) madvise(buffer.bytes.get(), buffer.capacity, MADV_HUGEPAGE);
      // One call maps the pages decompression is about to write: a page
      // fault per 4 KiB (where huge pages are unavailable) costs far more
      // in a VM. Best effort: older kernels refuse it and fault as before.
      // Small buffers (frame-pointer traces: only the copies' lengths) take
      // their few faults; the system call cost more than they do.
      if (size >= kPopulateAtLeast) madvise(buffer.bytes.get(), size, MADV_POPULATE_WRITE);
    }
    size_t capacity = buffer.capacity;
    uint8_t* bytes = buffer.bytes.release();
    return std::shared_ptr<uint8_t[]>(bytes,
                                      [this, capacity](uint8_t* b) { release(b, capacity); });
  }

 private:
  static constexpr size_t kGranule = 64 * 1024;
  static constexpr size_t kHugePage = 2 * 1024 * 1024;
  static constexpr size_t kMaxFree = 8;
  struct Free {
    void operator()(uint8_t* bytes) const { std::free(bytes); }
  };
  struct Buffer {
    std::unique_ptr<uint8_t, Free> bytes;
    size_t capacity = 0;
  };

  void release(uint8_t* bytes, size_t capacity) {
    Buffer buffer{std::unique_ptr<uint8_t, Free>(bytes), capacity};
    std::lock_guard lock(mutex_);
    if (free_.size() < kMaxFree) free_.push_back(std::move(buffer));
  }

  std::mutex mutex_;
  std::vector<Buffer> free_;
};

}  // namespace

std::shared_ptr<uint8_t[]> acquireBlobBuffer(size_t size) {
  // Never destroyed: chunks may outlive static destruction order.
  static BlobBufferPool* pool = new BlobBufferPool();
  return pool->acquire(size);
}

void Chunk::setBlobs(unsigned column, std::shared_ptr<uint8_t[]> buffer, size_t at, size_t size) {
  if (column >= columns_.size()) return;
  if (blobs_.size() <= column) blobs_.resize(column + 1);
  Blobs& blobs = blobs_[column];
  blobs.offsets.assign(1, 0);
  blobs.offsets.reserve(columns_[column].size() + 1);
  for (uint64_t length : columns_[column]) blobs.offsets.push_back(blobs.offsets.back() + length);
  // The codec checked that the lengths add up; a mismatch means a caller bug.
  if (blobs.offsets.back() != size || (size != 0 && buffer == nullptr)) {
    blobs = Blobs{};
    return;
  }
  blobs.data = buffer ? buffer.get() + at : nullptr;
  blobs.buffer = std::move(buffer);
}

void Chunk::releaseBlobs(unsigned column) {
  if (column < blobs_.size()) blobs_[column] = Blobs{};
}

std::span<const uint8_t> Chunk::bytes(unsigned column, size_t row) const {
  if (column >= blobs_.size()) return {};
  const Blobs& blobs = blobs_[column];
  if (row + 1 >= blobs.offsets.size() || blobs.data == nullptr) return {};
  return std::span<const uint8_t>(blobs.data + blobs.offsets[row],
                                  blobs.offsets[row + 1] - blobs.offsets[row]);
}

}  // namespace incise::format
