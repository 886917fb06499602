// TargetFilter: the one `targets` map (tgids to record) shared by every BPF
// program, plus the options that tell the programs how to filter.
//
// The recorder creates the map once; each source, between open and load,
// points its skeleton's `targets` map at it and copies the filter options
// into its .rodata:
//
//   TargetFilter filter = *TargetFilter::create(config);
//   INCISE_RETURN_IF_ERROR(filter.shareMap(skel->maps.targets));
//   filter.setRodata(skel->rodata);     // filter_by_pid, target_cgroup_id, recorder_tgid
//   ... load ...
//   filter.addPid(child_pid);           // -- CMD: before the child execs
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "recorder/record_config.h"

struct bpf_map;

namespace incise::recorder {

class TargetFilter {
 public:
  static Result<TargetFilter> create(const RecordConfig& config);
  TargetFilter(TargetFilter&& other) noexcept = default;
  TargetFilter& operator=(TargetFilter&& other) noexcept = default;

  bool filterByPid() const { return filter_by_pid_; }
  uint64_t cgroupId() const { return cgroup_id_; }
  int mapFd() const { return map_fd_.get(); }

  // Before load: make `map` (a skeleton's `targets`) this filter's map.
  Status shareMap(bpf_map* map) const;

  // Any skeleton rodata with `filter_by_pid`, `target_cgroup_id` and
  // `recorder_tgid` fields. The recorder's own process is never recorded.
  template <typename Rodata>
  void setRodata(Rodata* rodata) const {
    rodata->filter_by_pid = filter_by_pid_;
    rodata->target_cgroup_id = cgroup_id_;
    rodata->recorder_tgid = recorder_tgid_;
  }

  Status addPid(uint32_t tgid);
  // The tgids in the map now (children of targets are added by the kernel).
  std::vector<uint32_t> pids() const;
  bool isTarget(uint32_t tgid) const;
  uint32_t recorderPid() const { return recorder_tgid_; }

 private:
  TargetFilter() = default;
  UniqueFd map_fd_;
  bool filter_by_pid_ = false;
  uint64_t cgroup_id_ = 0;
  uint32_t recorder_tgid_ = 0;
};

// The cgroup v2 id of a cgroup directory (its inode number), as
// bpf_get_current_cgroup_id() reports it.
Result<uint64_t> cgroupIdOf(const std::string& path);

}  // namespace incise::recorder
