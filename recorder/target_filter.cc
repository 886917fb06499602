#include "recorder/target_filter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "recorder/libbpf_error.h"

namespace incise::recorder {

namespace {
constexpr uint32_t kMaxTargets = 65536;  // bpf/target_filter.bpf.h MAX_TARGETS
}

Result<uint64_t> cgroupIdOf(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return Error("cgroup " + path + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return Error("cgroup " + path + ": not a directory");
  return static_cast<uint64_t>(st.st_ino);
}

Result<TargetFilter> TargetFilter::create(const RecordConfig& config) {
  TargetFilter filter;
  filter.map_fd_.reset(bpf_map_create(BPF_MAP_TYPE_HASH, "targets", sizeof(uint32_t),
                                      sizeof(uint8_t), kMaxTargets, nullptr));
  if (!filter.map_fd_) return libbpfError("create the targets map", errno);
  filter.recorder_tgid_ = static_cast<uint32_t>(getpid());
  switch (config.target_kind) {
    case TargetKind::kPids:
    case TargetKind::kCommand:
      filter.filter_by_pid_ = true;
      break;
    case TargetKind::kCgroup: {
      Result<uint64_t> id = cgroupIdOf(config.cgroup_path);
      if (!id) return id.error();
      filter.cgroup_id_ = *id;
      break;
    }
    case TargetKind::kAll:
      break;
  }
  for (uint32_t pid : config.pids) INCISE_RETURN_IF_ERROR(filter.addPid(pid));
  return filter;
}

Status TargetFilter::shareMap(bpf_map* map) const {
  int err = bpf_map__reuse_fd(map, map_fd_.get());
  if (err) return libbpfError("share the targets map", err);
  return Status::ok();
}

Status TargetFilter::addPid(uint32_t tgid) {
  uint8_t one = 1;
  if (bpf_map_update_elem(map_fd_.get(), &tgid, &one, BPF_ANY) != 0)
    return libbpfError("add pid " + std::to_string(tgid) + " to the targets map", errno);
  return Status::ok();
}

std::vector<uint32_t> TargetFilter::pids() const {
  std::vector<uint32_t> out;
  uint32_t key = 0;
  uint32_t next = 0;
  const void* previous = nullptr;
  while (bpf_map_get_next_key(map_fd_.get(), previous, &next) == 0) {
    out.push_back(next);
    key = next;
    previous = &key;
  }
  return out;
}

bool TargetFilter::isTarget(uint32_t tgid) const {
  if (tgid == recorder_tgid_) return false;
  if (!filter_by_pid_) return true;
  uint8_t value = 0;
  return bpf_map_lookup_elem(map_fd_.get(), &tgid, &value) == 0;
}

}  // namespace incise::recorder
