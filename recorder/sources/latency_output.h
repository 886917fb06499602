// LatencyOutput: what every latency loader (functions, syscalls, block I/O,
// io_uring, kernel functions) does with its BPF object once it is loaded:
// latency_event records into format::Latency rows, and with --aggregate the
// histograms counted in BPF into format::LatencyHistogram rows, one interval
// per flush. The loaders differ only in what they attach.
//
//   output_.bind(sink, {.hists = skel->maps.latency_hists, .stacks = skel->maps.latency_stacks,
//                       .generation = &skel->bss->generation, .aggregate =
//                       config.latency_aggregate});
//   poller.add(bpf_map__fd(skel->maps.events), &LatencyOutput::onRecord, &output_);
//   output_.poll(sink);     // Source::pollLost, every flush
//   output_.finish(sink);   // Source::finish, after detaching
//
// Aggregation double-buffers by generation: the programs count into the
// current one; at each flush the recorder drains the generation it left at
// the previous flush (nothing still adds to it) and flips again, so no count
// is lost or counted twice.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "format/metadata.h"

struct bpf_map;

namespace incise::recorder {

class EventSink;

struct LatencyMaps {
  bpf_map* hists = nullptr;
  bpf_map* stacks = nullptr;
  uint32_t* generation = nullptr;  // in the object's mmapped .bss
  bool aggregate = false;
  uint32_t weight = 1;  // calls each counted call stands for (--sample N)
};

class LatencyOutput {
 public:
  // Names a probe value the first time a row carries it (block devices);
  // nullopt: no name.
  using Namer = std::function<std::optional<format::LatencyProbe>(uint64_t probe)>;

  void bind(EventSink& sink, const LatencyMaps& maps, Namer namer = {});
  static int onRecord(void* context, void* data, size_t size);
  void poll(EventSink& sink);
  void finish(EventSink& sink);

 private:
  void decode(const void* data, size_t size);
  void nameOnce(uint32_t source, uint64_t probe);
  void drain(EventSink& sink, uint32_t generation, uint64_t start, uint64_t end);
  uint64_t stackOf(EventSink& sink, uint64_t hash);

  EventSink* sink_ = nullptr;
  LatencyMaps maps_;
  Namer namer_;
  std::unordered_set<uint64_t> named_;
  // --aggregate: when the current and the previous generation began.
  uint32_t current_ = 0;
  uint64_t current_start_ = 0;
  uint64_t previous_start_ = 0;
  bool previous_pending_ = false;
  std::unordered_map<uint64_t, uint64_t> stack_ids_;  // BPF stack hash -> interned id
};

// One metadata delta naming `probes`, now.
void addLatencyProbes(EventSink& sink, std::vector<format::LatencyProbe> probes);

}  // namespace incise::recorder
