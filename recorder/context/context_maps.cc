// The recording's context-value maps: see context_maps.h.
#include "recorder/context/context_maps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <string>

#include "bpf/context.h"
#include "recorder/libbpf_error.h"

namespace incise::recorder {
namespace {

Result<UniqueFd> createMap(bpf_map_type type, const char* name, uint32_t key_size,
                           uint32_t value_size, uint32_t entries) {
  int fd = bpf_map_create(type, name, key_size, value_size, entries, nullptr);
  if (fd < 0) return libbpfError(std::string("context: create the ") + name + " map", errno);
  return UniqueFd(fd);
}

}  // namespace

ContextMaps& ContextMaps::recording() {
  static ContextMaps maps;
  return maps;
}

Status ContextMaps::create(uint32_t slots, uint32_t ring_bytes) {
  *this = ContextMaps();
  if (slots == 0) return Status::ok();
  INCISE_ASSIGN_OR_RETURN(processes_,
                          createMap(BPF_MAP_TYPE_HASH, "context_process", sizeof(uint32_t),
                                    sizeof(context_process), MAX_CONTEXT_PROCESSES));
  INCISE_ASSIGN_OR_RETURN(threads_,
                          createMap(BPF_MAP_TYPE_LRU_HASH, "context_threads", sizeof(uint32_t),
                                    sizeof(context_thread), MAX_CONTEXT_THREADS));
  INCISE_ASSIGN_OR_RETURN(events_,
                          createMap(BPF_MAP_TYPE_RINGBUF, "context_events", 0, 0, ring_bytes));
  INCISE_ASSIGN_OR_RETURN(drops_, createMap(BPF_MAP_TYPE_PERCPU_ARRAY, "context_drops",
                                            sizeof(uint32_t), sizeof(uint64_t), LOST_SOURCE_SLOTS));
  slots_ = slots;
  return Status::ok();
}

Status ContextMaps::useIn(bpf_object* object) const {
  if (slots_ == 0) return Status::ok();
  const std::pair<const char*, int> maps[] = {{"context_processes", processes_.get()},
                                              {"context_threads", threads_.get()},
                                              {"context_events", events_.get()},
                                              {"context_drops", drops_.get()}};
  for (const auto& [name, fd] : maps) {
    bpf_map* map = bpf_object__find_map_by_name(object, name);
    if (map == nullptr) return Error(std::string("context: the object has no ") + name + " map");
    if (int err = bpf_map__reuse_fd(map, fd))
      return libbpfError(std::string("context: share the ") + name + " map", err);
  }
  return Status::ok();
}

}  // namespace incise::recorder
