#include "recorder/perf_ring.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace incise::recorder {

namespace {

perf_event_mmap_page* metaOf(void* base) {
  return static_cast<perf_event_mmap_page*>(base);
}

}  // namespace

Result<PerfRing> PerfRing::map(int fd, size_t data_pages) {
  if (data_pages == 0 || (data_pages & (data_pages - 1)) != 0)
    return Error("perf ring: data pages must be a power of two");
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  PerfRing ring;
  ring.mapped_bytes_ = (data_pages + 1) * page;
  void* base = mmap(nullptr, ring.mapped_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return Error(std::string("perf ring: mmap: ") + std::strerror(errno));
  ring.base_ = base;
  perf_event_mmap_page* meta = metaOf(base);
  // data_offset/data_size exist since 4.1; before that the data follows the first page.
  const size_t offset = meta->data_offset ? meta->data_offset : page;
  ring.data_size_ = meta->data_size ? meta->data_size : data_pages * page;
  ring.data_ = static_cast<const uint8_t*>(base) + offset;
  return ring;
}

PerfRing::PerfRing(PerfRing&& other) noexcept {
  *this = std::move(other);
}

PerfRing& PerfRing::operator=(PerfRing&& other) noexcept {
  if (this != &other) {
    if (base_) munmap(base_, mapped_bytes_);
    base_ = std::exchange(other.base_, nullptr);
    mapped_bytes_ = other.mapped_bytes_;
    data_ = other.data_;
    data_size_ = other.data_size_;
    wrapped_ = std::move(other.wrapped_);
  }
  return *this;
}

PerfRing::~PerfRing() {
  if (base_) munmap(base_, mapped_bytes_);
}

bool PerfRing::empty() const {
  const perf_event_mmap_page* meta = metaOf(base_);
  return __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE) == meta->data_tail;
}

size_t PerfRing::consume(const std::function<void(std::span<const uint8_t>)>& sink) {
  perf_event_mmap_page* meta = metaOf(base_);
  // Acquire: the records' bytes are visible once the head that covers them is.
  const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  size_t count = 0;
  while (head - tail >= sizeof(perf_event_header)) {
    const size_t at = static_cast<size_t>(tail % data_size_);
    // Records are 8-byte aligned and so is the ring: a header never wraps.
    perf_event_header header{};
    std::memcpy(&header, data_ + at, sizeof(header));
    if (header.size < sizeof(header) || header.size > head - tail || header.size > data_size_) {
      tail = head;  // not a record we can trust: skip what was written
      break;
    }
    if (at + header.size <= data_size_) {
      sink(std::span<const uint8_t>(data_ + at, header.size));
    } else {
      const size_t first = data_size_ - at;
      wrapped_.resize(header.size);
      std::memcpy(wrapped_.data(), data_ + at, first);
      std::memcpy(wrapped_.data() + first, data_, header.size - first);
      sink(std::span<const uint8_t>(wrapped_.data(), wrapped_.size()));
    }
    tail += header.size;
    ++count;
  }
  // Release: we are done reading the bytes before the kernel may reuse them.
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  return count;
}

}  // namespace incise::recorder
