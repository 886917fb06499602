// Steps every source repeats between opening its skeleton and loading it,
// and an owning pointer for skeletons. Works with any skeleton whose BPF
// object includes bpf/target_filter.bpf.h and bpf/event_output.bpf.h.
//
//   SkeletonPtr<profile_bpf> skel(profile_bpf__open(), &profile_bpf__destroy);
//   if (!skel) return libbpfError("cpu samples: open", errno);
//   INCISE_RETURN_IF_ERROR(prepareSkeleton(skel.get(), filter, ringBytesFor(config, 1)));
//   if (int err = profile_bpf__load(skel.get())) return libbpfError("cpu samples: load", err);
#pragma once

#include <bpf/libbpf.h>

#include <memory>

#include "base/status.h"
#include "recorder/context/context_maps.h"
#include "recorder/libbpf_error.h"
#include "recorder/record_config.h"
#include "recorder/target_filter.h"

namespace incise::recorder {

template <typename Skeleton>
using SkeletonPtr = std::unique_ptr<Skeleton, void (*)(Skeleton*)>;

// Whether each program's load asks the verifier for its statistics
// (instructions processed, states, verification time: log level 4), which
// libbpf then prints with its debug output (--verbose). Set before any
// source loads.
inline bool& verifierStatistics() {
  static bool wanted = false;
  return wanted;
}

// Filter options into .rodata, the shared targets map, the ring size
// (`ring_bytes`, usually ringBytesFor(config, 1)); for an object that reads
// context values (bpf/context.bpf.h), the recording's context maps.
template <typename Skeleton>
Status prepareSkeleton(Skeleton* skel, const TargetFilter& filter, uint32_t ring_bytes) {
  filter.setRodata(skel->rodata);
  if (verifierStatistics()) {
    bpf_program* prog;
    bpf_object__for_each_program(prog, skel->obj) bpf_program__set_log_level(prog, 4);
  }
  INCISE_RETURN_IF_ERROR(filter.shareMap(skel->maps.targets));
  if constexpr (requires { skel->rodata->context_slots; }) {
    const ContextMaps& contexts = ContextMaps::recording();
    skel->rodata->context_slots = contexts.slots();
    INCISE_RETURN_IF_ERROR(contexts.useIn(skel->obj));
  }
  if (int err = bpf_map__set_max_entries(skel->maps.events, ring_bytes))
    return libbpfError("size the ring buffer", err);
  return Status::ok();
}

// Owns a libbpf link; destroying it detaches the program.
struct LinkDeleter {
  void operator()(bpf_link* link) const { bpf_link__destroy(link); }
};
using LinkPtr = std::unique_ptr<bpf_link, LinkDeleter>;

}  // namespace incise::recorder
