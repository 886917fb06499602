// SharedMap: one BPF map used by several BPF objects that each declare it
// (e.g. `wait_user_stacks`, bpf/wait_stack.bpf.h, in the scheduler and the
// lock objects). The first object to load creates it as libbpf would; the
// others point their copy at it before they load. Works for any map type,
// including ones the recorder could not create by hand (BTF-typed ones).
//
//   auto shared = std::make_shared<SharedMap>("wait_user_stacks");
//   INCISE_RETURN_IF_ERROR(shared->useIn(skel->maps.wait_user_stacks));   // before load
//   if (int err = sched_bpf__load(skel)) ...
//   INCISE_RETURN_IF_ERROR(shared->adoptFrom(skel->maps.wait_user_stacks));  // after load
#pragma once

#include <string>

#include "format/status.h"

struct bpf_map;

namespace incise::recorder {

class SharedMap {
 public:
  explicit SharedMap(std::string name) : name_(std::move(name)) {}
  SharedMap(const SharedMap&) = delete;
  SharedMap& operator=(const SharedMap&) = delete;
  ~SharedMap();

  // Before load: `map` becomes the shared map if an earlier object created
  // it; otherwise this object's load creates its own.
  Status useIn(bpf_map* map) const;
  // After load: the first loaded object's map becomes the shared one.
  Status adoptFrom(const bpf_map* map);

 private:
  std::string name_;
  int fd_ = -1;
};

}  // namespace incise::recorder
