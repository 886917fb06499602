// SharedMap: see shared_map.h.
#include "recorder/shared_map.h"

#include <bpf/libbpf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "recorder/libbpf_error.h"

namespace incise::recorder {

SharedMap::~SharedMap() {
  if (fd_ >= 0) close(fd_);
}

Status SharedMap::useIn(bpf_map* map) const {
  if (fd_ < 0) return Status::ok();
  if (int err = bpf_map__reuse_fd(map, fd_)) return libbpfError("share the " + name_ + " map", err);
  return Status::ok();
}

Status SharedMap::adoptFrom(const bpf_map* map) {
  if (fd_ >= 0) return Status::ok();
  // A copy of the descriptor: the map outlives the object that created it
  // as long as another object or this class still uses it.
  int fd = fcntl(bpf_map__fd(map), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return libbpfError("keep the " + name_ + " map", errno);
  fd_ = fd;
  return Status::ok();
}

}  // namespace incise::recorder
