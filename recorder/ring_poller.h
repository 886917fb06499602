// RingPoller: one libbpf ring_buffer manager over the `events` ring of every
// source, drained by the main loop (the only thread that touches the writer).
// Other readable descriptors (perf rings) can join: each poll runs their
// drain before it takes the BPF rings, so what they carry (mmap records)
// comes before the events that depend on it (samples in new mappings).
//
//   RingPoller poller;
//   INCISE_RETURN_IF_ERROR(poller.add(bpf_map__fd(skel->maps.events), &onEvent, this));
//   INCISE_RETURN_IF_ERROR(poller.addDrain(perf_fds, [&] { ring.consume(...); }));
//   while (running) { Result<int> n = poller.poll(100); ... }
#pragma once

#include <bpf/libbpf.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace incise::recorder {

class RingPoller {
 public:
  RingPoller() = default;
  RingPoller(const RingPoller&) = delete;
  RingPoller& operator=(const RingPoller&) = delete;
  ~RingPoller();

  // `callback` returns 0 to continue; a negative value stops this poll.
  Status add(int map_fd, ring_buffer_sample_fn callback, void* context);
  // `drain` runs on every poll and drain, before the BPF rings are taken;
  // any of `fds` becoming readable ends a poll's wait early. On an error
  // nothing was added. `drain` must stay callable while polls run.
  Status addDrain(std::span<const UniqueFd> fds, std::function<void()> drain);
  // Events consumed: waits at most `timeout_ms` for a wake-up, then takes
  // everything in every ring (most records are written without one).
  Result<int> poll(int timeout_ms);
  // Everything already in the rings, without waiting.
  Result<int> drain();
  bool empty() const { return rings_ == nullptr; }
  uint64_t eventsConsumed() const { return consumed_; }

  // From a callback: the poll or drain under way ends after this record;
  // the records after it stay in the rings for the next one. False (and
  // nothing changes) when no poll or drain is under way.
  bool pause();

 private:
  struct Subscriber {
    RingPoller* poller;
    ring_buffer_sample_fn callback;
    void* context;
  };
  static int deliver(void* subscriber, void* data, size_t size);
  // Every BPF ring's records, after a wait of up to `wait_ms` for a wake-up
  // (none without it); ends early after a pause().
  Result<int> takeRings(std::optional<int> wait_ms);
  void runDrains();

  ring_buffer* rings_ = nullptr;
  std::deque<Subscriber> subscribers_;  // libbpf holds their addresses
  bool taking_ = false;                 // a poll or drain is under way
  bool paused_ = false;
  uint64_t consumed_ = 0;
  // With drains: an epoll over libbpf's epoll and the drains' descriptors.
  UniqueFd epoll_fd_;
  std::vector<std::function<void()>> drains_;
};

}  // namespace incise::recorder
