#include "recorder/ring_poller.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "recorder/libbpf_error.h"

namespace incise::recorder {

RingPoller::~RingPoller() {
  if (rings_) ring_buffer__free(rings_);
}

namespace {

Status watch(int epoll_fd, int fd) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = fd;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0)
    return Error(std::string("watch a ring: ") + std::strerror(errno));
  return Status::ok();
}

}  // namespace

Status RingPoller::addDrain(std::span<const UniqueFd> fds, std::function<void()> drain) {
  if (!epoll_fd_) {
    UniqueFd fd(epoll_create1(EPOLL_CLOEXEC));
    if (!fd) return Error::fromErrno(errno, "epoll_create1");
    if (rings_) INCISE_RETURN_IF_ERROR(watch(fd.get(), ring_buffer__epoll_fd(rings_)));
    epoll_fd_ = std::move(fd);
  }
  for (size_t i = 0; i < fds.size(); ++i) {
    if (Status s = watch(epoll_fd_.get(), fds[i].get()); !s) {
      for (size_t j = 0; j < i; ++j)
        epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fds[j].get(), nullptr);
      return s;
    }
  }
  drains_.push_back(std::move(drain));
  return Status::ok();
}

void RingPoller::runDrains() {
  for (const auto& drain : drains_) drain();
}

Status RingPoller::add(int map_fd, ring_buffer_sample_fn callback, void* context) {
  if (!rings_) {
    rings_ = ring_buffer__new(map_fd, callback, context, nullptr);
    if (!rings_) return libbpfError("open ring buffer", errno);
    if (epoll_fd_) return watch(epoll_fd_.get(), ring_buffer__epoll_fd(rings_));
    return Status::ok();
  }
  int err = ring_buffer__add(rings_, map_fd, callback, context);
  if (err) return libbpfError("add ring buffer", err);
  return Status::ok();
}

Result<int> RingPoller::poll(int timeout_ms) {
  if (epoll_fd_) {
    // Wait on everything; then the drains, then every BPF ring.
    epoll_event events[8];
    int woken = epoll_wait(epoll_fd_.get(), events, 8, timeout_ms);
    if (woken < 0 && errno != EINTR)
      return Error(std::string("poll ring buffers: ") + std::strerror(errno));
    return drain();
  }
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
  runDrains();
  if (!rings_) return 0;
  int n = ring_buffer__consume(rings_);
  if (n < 0) return libbpfError("drain ring buffers", n);
  consumed_ += static_cast<uint64_t>(n);
  return n;
}

}  // namespace incise::recorder
