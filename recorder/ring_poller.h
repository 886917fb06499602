// RingPoller: one libbpf ring_buffer manager over the `events` ring of every
// source, drained by the main loop (the only thread that touches the writer).
//
//   RingPoller poller;
//   INCISE_RETURN_IF_ERROR(poller.add(bpf_map__fd(skel->maps.events), &onEvent, this));
//   while (running) { Result<int> n = poller.poll(100); ... }
#pragma once

#include <bpf/libbpf.h>

#include <cstdint>

#include "format/status.h"

namespace incise::recorder {

class RingPoller {
 public:
  RingPoller() = default;
  RingPoller(const RingPoller&) = delete;
  RingPoller& operator=(const RingPoller&) = delete;
  ~RingPoller();

  // `callback` returns 0 to continue; a negative value stops this poll.
  Status add(int map_fd, ring_buffer_sample_fn callback, void* context);
  // Events consumed: waits at most `timeout_ms` for a wake-up, then takes
  // everything in every ring (most records are written without one).
  Result<int> poll(int timeout_ms);
  // Everything already in the rings, without waiting.
  Result<int> drain();
  bool empty() const { return rings_ == nullptr; }
  uint64_t eventsConsumed() const { return consumed_; }

 private:
  ring_buffer* rings_ = nullptr;
  uint64_t consumed_ = 0;
};

}  // namespace incise::recorder
