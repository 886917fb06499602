// DropCounter: turns a program's per-CPU `drops` array (bpf/event_output.bpf.h,
// indexed by enum lost_source) into format::Lost rows, one per source with
// new drops since the last read.
//
//   DropCounter drops(skel->maps.drops);
//   drops.poll(sink);   // in Source::pollLost
#pragma once

#include <cstdint>
#include <vector>

struct bpf_map;

namespace incise::recorder {

class EventSink;

class DropCounter {
 public:
  DropCounter() = default;
  explicit DropCounter(const bpf_map* drops);
  // A drops array shared by several objects (bpf/context.bpf.h's context_drops).
  explicit DropCounter(int drops_fd);
  void poll(EventSink& sink);
  uint64_t total() const;

 private:
  int map_fd_ = -1;
  std::vector<uint64_t> reported_;  // per lost_source slot
};

}  // namespace incise::recorder
