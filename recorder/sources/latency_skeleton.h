// The steps every latency loader repeats on its skeleton, and the run-time
// parts of one loaded latency object. Works with any skeleton whose object
// includes bpf/latency.bpf.h.
//
//   LatencyObject<syscalls_bpf> object_{&syscalls_bpf__destroy};
//   // open:
//   INCISE_RETURN_IF_ERROR(object_.open(syscalls_bpf__open(), filter, ringBytesFor(config, 2),
//                                       config, "syscalls"));
//   if (int err = syscalls_bpf__load(object_.get())) return libbpfError("syscalls: load", err);
//   // attach:
//   INCISE_RETURN_IF_ERROR(object_.attach({object_->progs.syscall_enter, ...}, "syscalls"));
//   return object_.start(poller, sink, config);
//   // every flush, and after stopping:
//   object_.poll(sink);
//   object_.finish(sink);
#pragma once

#include <bpf/libbpf.h>

#include <cerrno>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "recorder/drop_counter.h"
#include "recorder/libbpf_error.h"
#include "recorder/record_config.h"
#include "recorder/ring_poller.h"
#include "recorder/sources/latency_output.h"
#include "recorder/sources/skeleton_setup.h"
#include "recorder/target_filter.h"

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

// One latency object from open to finish: the skeleton, its links, its drop
// counter and the LatencyOutput the ring feeds. It stays where it is once
// started (the ring poller holds the output's address).
template <typename Skeleton>
class LatencyObject {
 public:
  explicit LatencyObject(void (*destroy)(Skeleton*)) : skel_(nullptr, destroy) {}
  LatencyObject(const LatencyObject&) = delete;
  LatencyObject& operator=(const LatencyObject&) = delete;

  Skeleton* get() const { return skel_.get(); }
  Skeleton* operator->() const { return skel_.get(); }
  const bpf_object* bpfObject() const { return skel_ ? skel_->obj : nullptr; }

  // Takes the skeleton `X__open()` returned (null: errno says why) and sets
  // what every latency object reads before it loads. `what` names the source
  // in errors.
  Status open(Skeleton* opened, const TargetFilter& filter, uint32_t ring_bytes,
              const RecordConfig& config, std::string_view what) {
    skel_.reset(opened);
    if (!skel_) return libbpfError(std::string(what) + ": open", errno);
    if (Status s = prepareSkeleton(skel_.get(), filter, ring_bytes); !s)
      return s.error().context(std::string(what));
    setLatencyRodata(skel_->rodata, config);
    return Status::ok();
  }

  // Attaches each of `programs` that was loaded (autoload on), in order.
  Status attach(std::initializer_list<bpf_program*> programs, std::string_view what) {
    for (bpf_program* program : programs) {
      if (!bpf_program__autoload(program)) continue;
      bpf_link* link = bpf_program__attach(program);
      if (!link)
        return libbpfError(std::string(what) + ": attach " + bpf_program__name(program), errno);
      keep(link);
    }
    return Status::ok();
  }
  // A link the loader attached itself (uprobes with their own options).
  void keep(bpf_link* link) { links_.emplace_back(link); }

  // Once attached: lost events counted, rows and histograms into the trace.
  Status start(RingPoller& poller, EventSink& sink, const RecordConfig& config,
               LatencyOutput::Namer namer = {}) {
    drops_ = DropCounter(skel_->maps.drops);
    output_.bind(sink, latencyMaps(skel_.get(), config), std::move(namer));
    return poller.add(bpf_map__fd(skel_->maps.events), &LatencyOutput::onRecord, &output_);
  }

  void poll(EventSink& sink) {
    drops_.poll(sink);
    output_.poll(sink);
  }

  void finish(EventSink& sink) {
    links_.clear();  // nothing adds to the histograms once detached
    output_.finish(sink);
  }

 private:
  SkeletonPtr<Skeleton> skel_;
  std::vector<LinkPtr> links_;
  DropCounter drops_;
  LatencyOutput output_;
};

}  // namespace incise::recorder
