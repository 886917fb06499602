// SharedMap: one BPF map used by several BPF objects that each declare it
// (e.g. `wait_user_stacks`, bpf/wait_stack.bpf.h, in the scheduler and the
// lock objects). The first object to ask creates it from its own declaration
// (type, sizes, flags), before any of them loads; every object then points
// its copy at that map. So the objects can be loaded in any order, at once
// on several threads. A map that cannot be created outside its object (one
// whose value needs BTF: spin locks, timers, kptrs) is created by the first
// object's load instead, and the others must then load after it.
//
//   auto shared = std::make_shared<SharedMap>("wait_user_stacks");
//   INCISE_RETURN_IF_ERROR(shared->useIn(skel->maps.wait_user_stacks));   // before load
//   if (int err = sched_bpf__load(skel)) ...
//   INCISE_RETURN_IF_ERROR(shared->adoptFrom(skel->maps.wait_user_stacks));  // after load
#pragma once

#include <mutex>
#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

struct bpf_map;

namespace incise::recorder {

class SharedMap {
 public:
  explicit SharedMap(std::string name) : name_(std::move(name)) {}
  SharedMap(const SharedMap&) = delete;
  SharedMap& operator=(const SharedMap&) = delete;

  // Before load: `map` becomes the shared map, created now from its
  // declaration if no object did so yet. Thread-safe.
  Status useIn(bpf_map* map);
  // After load: when the map could not be created by hand, the first loaded
  // object's map becomes the shared one. Thread-safe.
  Status adoptFrom(const bpf_map* map);

 private:
  std::string name_;
  std::mutex mutex_;
  UniqueFd fd_;
};

}  // namespace incise::recorder
