// PerfRing: the reading side of one perf event's mmap'd ring buffer.
//
// The kernel writes records at data_head; the reader consumes from
// data_tail and moves it on, which frees the space (a full ring makes the
// kernel count lost records and report them in a PERF_RECORD_LOST). A
// record that wraps around the end of the ring is handed out copied whole.
//
//   Result<PerfRing> ring = PerfRing::map(fd, /*data_pages=*/64);
//   ring->consume([](std::span<const uint8_t> record) { ... });  // whole records
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "base/status.h"

namespace incise::recorder {

class PerfRing {
 public:
  // `data_pages` must be a power of two. The ring keeps no reference to
  // `fd`, which must stay open while the ring is used.
  static Result<PerfRing> map(int fd, size_t data_pages);
  PerfRing(PerfRing&& other) noexcept;
  PerfRing& operator=(PerfRing&& other) noexcept;
  PerfRing(const PerfRing&) = delete;
  PerfRing& operator=(const PerfRing&) = delete;
  ~PerfRing();

  // Nothing written since the last consume (two loads; cheap to ask often).
  bool empty() const;
  // Hands every whole record written so far to `sink`, then frees them.
  // Returns how many; a record whose size does not fit the ring stops it.
  size_t consume(const std::function<void(std::span<const uint8_t>)>& sink);
  size_t dataBytes() const { return data_size_; }

 private:
  PerfRing() = default;
  void* base_ = nullptr;
  size_t mapped_bytes_ = 0;
  const uint8_t* data_ = nullptr;
  size_t data_size_ = 0;
  std::vector<uint8_t> wrapped_;  // a record that crosses the ring's end
};

}  // namespace incise::recorder
