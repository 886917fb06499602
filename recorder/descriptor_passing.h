// One message and its descriptors over a SOCK_SEQPACKET Unix socket
// (SCM_RIGHTS): what the uprobe attacher and its helper exchange.
//
//   if (!sendWithDescriptor(socket, &request, sizeof request, file_fd)) ...;
//   ReceivedMessage got = receiveWithDescriptors(socket, &reply, sizeof reply);
//   if (got.bytes == 0) ...;             // the other end closed
//   got.fds: every descriptor that came, owned (closed unless taken)
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <vector>

#include "base/unique_fd.h"

namespace incise::recorder {

// Sends `size` bytes and, when `fd` is not negative, that descriptor; false
// when the message did not go whole (errno says why). Never raises SIGPIPE.
bool sendWithDescriptor(int socket_fd, const void* data, size_t size, int fd);

struct ReceivedMessage {
  ssize_t bytes = 0;       // 0: the other end closed; negative: an error (errno)
  bool truncated = false;  // the message or its descriptors did not fit
  std::vector<UniqueFd> fds;
};

// Receives one message into `data` (at most `size` bytes), with up to four
// descriptors (close-on-exec); more than that are counted as truncation.
ReceivedMessage receiveWithDescriptors(int socket_fd, void* data, size_t size);

}  // namespace incise::recorder
