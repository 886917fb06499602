#include "recorder/descriptor_passing.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace incise::recorder {
namespace {

// More than a message carries, so that one with extras is seen (and its
// descriptors closed) rather than cut short silently.
constexpr size_t kMaxReceivedFds = 4;

}  // namespace

bool sendWithDescriptor(int socket_fd, const void* data, size_t size, int fd) {
  iovec io{.iov_base = const_cast<void*>(data), .iov_len = size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  if (fd >= 0) {
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  ssize_t sent;
  do {
    sent = sendmsg(socket_fd, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  return sent == static_cast<ssize_t>(size);
}

ReceivedMessage receiveWithDescriptors(int socket_fd, void* data, size_t size) {
  ReceivedMessage got;
  iovec io{.iov_base = data, .iov_len = size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxReceivedFds)] = {};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  do {
    got.bytes = recvmsg(socket_fd, &message, MSG_CMSG_CLOEXEC);
  } while (got.bytes < 0 && errno == EINTR);
  if (got.bytes < 0) return got;
  got.truncated = (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      got.fds.emplace_back(fd);
    }
  }
  return got;
}

}  // namespace incise::recorder
