// The steps every latency loader repeats on its skeleton: the options every
// latency object reads (.rodata of bpf/latency.bpf.h) and the maps its
// LatencyOutput drains. Works with any skeleton whose object includes
// bpf/latency.bpf.h.
//
//   setLatencyRodata(skel->rodata, config);          // between open and load
//   output_.bind(sink, latencyMaps(skel.get(), config));   // after load
#pragma once

#include "recorder/latency_output.h"
#include "recorder/record_config.h"

namespace incise::recorder {

template <typename Rodata>
void setLatencyRodata(Rodata* rodata, const RecordConfig& config) {
  rodata->sample_every = config.latency_sample > 1 ? config.latency_sample : 1;
  rodata->aggregate = config.latency_aggregate;
  rodata->with_stacks = config.stacks;
}

template <typename Skeleton>
LatencyMaps latencyMaps(Skeleton* skel, const RecordConfig& config) {
  return LatencyMaps{.hists = skel->maps.latency_hists,
                     .stacks = skel->maps.latency_stacks,
                     .generation = &skel->bss->generation,
                     .aggregate = config.latency_aggregate,
                     .weight = config.latency_sample > 1 ? config.latency_sample : 1};
}

}  // namespace incise::recorder
