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

// What deliver() returns for the record whose callback paused: libbpf
// counts that record consumed and ends the consume there.
constexpr int kPaused = -ECANCELED;

int RingPoller::deliver(void* subscriber, void* data, size_t size) {
  auto* s = static_cast<Subscriber*>(subscriber);
  int result = s->callback(s->context, data, size);
  if (result < 0) return result;
  ++s->poller->consumed_;
  return s->poller->paused_ ? kPaused : result;
}

bool RingPoller::pause() {
  if (!taking_) return false;
  paused_ = true;
  return true;
}

Status RingPoller::add(int map_fd, ring_buffer_sample_fn callback, void* context) {
  Subscriber* subscriber = &subscribers_.emplace_back(
      Subscriber{.poller = this, .callback = callback, .context = context});
  if (!rings_) {
    rings_ = ring_buffer__new(map_fd, &RingPoller::deliver, subscriber, nullptr);
    if (!rings_) return libbpfError("open ring buffer", errno);
    if (epoll_fd_) return watch(epoll_fd_.get(), ring_buffer__epoll_fd(rings_));
    return Status::ok();
  }
  int err = ring_buffer__add(rings_, map_fd, &RingPoller::deliver, subscriber);
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
  Result<int> woken = takeRings(timeout_ms);
  if (!woken || paused_) return woken;
  // The BPF side writes most records without waking us (bpf/event_output.bpf.h),
  // and epoll reports only rings that were woken: take the rest now.
  Result<int> rest = drain();
  if (!rest) return rest.error();
  return *woken + *rest;
}

Result<int> RingPoller::drain() {
  runDrains();
  if (!rings_) return 0;
  return takeRings(std::nullopt);
}

Result<int> RingPoller::takeRings(std::optional<int> wait_ms) {
  const uint64_t before = consumed_;
  taking_ = true;
  paused_ = false;
  int err = wait_ms ? ring_buffer__poll(rings_, *wait_ms) : ring_buffer__consume(rings_);
  taking_ = false;
  // -EINTR: a signal; the caller decides whether to stop.
  if (err < 0 && err != -EINTR && !(err == kPaused && paused_))
    return libbpfError(wait_ms ? "poll ring buffers" : "drain ring buffers", err);
  return static_cast<int>(consumed_ - before);
}

}  // namespace incise::recorder
