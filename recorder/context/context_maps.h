// The BPF maps of context values (bpf/context.bpf.h), one set per recording
// for every object that reads them: the processes' variable locations, the
// threads' last values, the ring of context-change records and its drop
// counters. Created before any source opens; each object's declared copies
// are pointed at them between open and load (prepareSkeleton does it for
// every skeleton that includes bpf/context.bpf.h). Without --context none is
// created and `context_slots` stays 0: the programs read nothing.
//
//   ContextMaps::recording().create(config.contexts.size(), ringBytesFor(config, 1));
//   ... in prepareSkeleton, before load ...
//   skel->rodata->context_slots = ContextMaps::recording().slots();
//   INCISE_RETURN_IF_ERROR(ContextMaps::recording().useIn(skel->obj));
#pragma once

#include <cstdint>

#include "base/status.h"
#include "base/unique_fd.h"

struct bpf_object;

namespace incise::recorder {

class ContextMaps {
 public:
  // The maps of this process's recording.
  static ContextMaps& recording();

  // `slots`: --context options (0: none, no map is made). Call before any
  // source opens; not thread-safe.
  Status create(uint32_t slots, uint32_t ring_bytes);
  uint32_t slots() const { return slots_; }

  // Before load: `object`'s context maps become these. Nothing without slots.
  Status useIn(bpf_object* object) const;

  int processesFd() const { return processes_.get(); }
  int eventsFd() const { return events_.get(); }
  int dropsFd() const { return drops_.get(); }

 private:
  uint32_t slots_ = 0;
  UniqueFd processes_;
  UniqueFd threads_;
  UniqueFd events_;
  UniqueFd drops_;
};

}  // namespace incise::recorder
