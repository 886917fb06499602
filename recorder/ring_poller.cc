#include "recorder/ring_poller.h"

#include <cerrno>

#include "recorder/libbpf_error.h"

namespace incise::recorder {

RingPoller::~RingPoller() {
  if (rings_) ring_buffer__free(rings_);
}

Status RingPoller::add(int map_fd, ring_buffer_sample_fn callback, void* context) {
  if (!rings_) {
    rings_ = ring_buffer__new(map_fd, callback, context, nullptr);
    if (!rings_) return libbpfError("open ring buffer", errno);
    return Status::ok();
  }
  int err = ring_buffer__add(rings_, map_fd, callback, context);
  if (err) return libbpfError("add ring buffer", err);
  return Status::ok();
}

Result<int> RingPoller::poll(int timeout_ms) {
  if (!rings_) return 0;
  int n = ring_buffer__poll(rings_, timeout_ms);
  if (n == -EINTR) return 0;  // a signal: the caller decides whether to stop
  if (n < 0) return libbpfError("poll ring buffers", n);
  consumed_ += static_cast<uint64_t>(n);
  // The BPF side writes most records without waking us (bpf/event_output.bpf.h),
  // and epoll reports only rings that were woken: take the rest now.
  Result<int> rest = drain();
  if (!rest) return rest.error();
  return n + *rest;
}

Result<int> RingPoller::drain() {
  if (!rings_) return 0;
  int n = ring_buffer__consume(rings_);
  if (n < 0) return libbpfError("drain ring buffers", n);
  consumed_ += static_cast<uint64_t>(n);
  return n;
}

}  // namespace incise::recorder
