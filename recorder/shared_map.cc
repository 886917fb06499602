// SharedMap: see shared_map.h.
#include "recorder/shared_map.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "recorder/libbpf_error.h"
#include "recorder/libbpf_options.h"

namespace incise::recorder {

Status SharedMap::useIn(bpf_map* map) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!fd_) {
    auto options = libbpfOptions<bpf_map_create_opts>();
    options.map_flags = bpf_map__map_flags(map);
    int fd = bpf_map_create(bpf_map__type(map), name_.substr(0, BPF_OBJ_NAME_LEN - 1).c_str(),
                            bpf_map__key_size(map), bpf_map__value_size(map),
                            bpf_map__max_entries(map), &options);
    if (fd < 0) return Status::ok();  // this object's load creates it (see adoptFrom)
    fd_.reset(fd);
  }
  if (int err = bpf_map__reuse_fd(map, fd_.get()))
    return libbpfError("share the " + name_ + " map", err);
  return Status::ok();
}

Status SharedMap::adoptFrom(const bpf_map* map) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_) return Status::ok();
  // A copy of the descriptor: the map outlives the object that created it
  // as long as another object or this class still uses it.
  int fd = fcntl(bpf_map__fd(map), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return libbpfError("keep the " + name_ + " map", errno);
  fd_.reset(fd);
  return Status::ok();
}

}  // namespace incise::recorder
