// The recording's context-value maps: see context_maps.h.
#include "recorder/context/context_maps.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <memory>
#include <string>

#include "bpf/context.h"
#include "recorder/libbpf_error.h"

namespace incise::recorder {
namespace {

Result<UniqueFd> createMap(bpf_map_type type, const char* name, uint32_t key_size,
                           uint32_t value_size, uint32_t entries,
                           const bpf_map_create_opts* options = nullptr) {
  int fd = bpf_map_create(type, name, key_size, value_size, entries, options);
  if (fd < 0) return libbpfError(std::string("context: create the ") + name + " map", errno);
  return UniqueFd(fd);
}

// The threads' task storage. The kernel wants BTF for a local-storage map's
// key and value: an int, and the value as bytes (no field the verifier
// treats specially).
Result<UniqueFd> createThreadStorage() {
  std::unique_ptr<btf, void (*)(btf*)> types(btf__new_empty(), btf__free);
  if (!types) return libbpfError("context: make the threads map's types", errno);
  const int int_id = btf__add_int(types.get(), "int", sizeof(int), BTF_INT_SIGNED);
  const int byte_id = btf__add_int(types.get(), "unsigned char", 1, 0);
  const int bytes_id =
      byte_id < 0 ? byte_id : btf__add_array(types.get(), int_id, byte_id, sizeof(context_thread));
  const int value_id = bytes_id < 0
                           ? bytes_id
                           : btf__add_struct(types.get(), "context_thread", sizeof(context_thread));
  if (int_id < 0 || value_id < 0 || btf__add_field(types.get(), "bytes", bytes_id, 0, 0) != 0)
    return libbpfError("context: make the threads map's types", errno);
  if (int err = btf__load_into_kernel(types.get()))
    return libbpfError("context: load the threads map's types", err);
  LIBBPF_OPTS(bpf_map_create_opts, options, .btf_fd = static_cast<__u32>(btf__fd(types.get())),
              .btf_key_type_id = static_cast<__u32>(int_id),
              .btf_value_type_id = static_cast<__u32>(value_id), .map_flags = BPF_F_NO_PREALLOC);
  return createMap(BPF_MAP_TYPE_TASK_STORAGE, "context_threads", sizeof(int),
                   sizeof(context_thread), 0, &options);
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
  INCISE_ASSIGN_OR_RETURN(threads_, createThreadStorage());
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
