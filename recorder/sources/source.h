// Source: one kind of data the recorder collects (CPU samples, scheduler
// events, locks, page faults), backed by one BPF skeleton.
//
// The main loop drives every source through the same steps, libbpf-tools
// order, and a source that cannot work on this kernel says why and is left
// out while the others go on:
//
//   for (auto& source : createSources(config, attacher, preload)) {
//     if (Status s = source->open(config, filter); !s) { warn(s); continue; }  // open, rodata,
//     load if (Status s = source->attach(poller, sink); !s) { warn(s); continue; }  // attach, add
//     rings
//   }
//   while (running) { poller.poll(100); for (auto& s : live) s->pollLost(sink); }
//   for (auto& s : live) s->finish(sink);
//
// Errors name the source and the failed step: "locks: attach uprobe
// pthread_mutex_lock in /lib/x86_64-linux-gnu/libc.so.6: No such file".
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "recorder/record_config.h"

struct bpf_object;

namespace incise::recorder {

class EventSink;
class PreloadRings;
class RingPoller;
class TargetFilter;
class UprobeAttacher;

class Source {
 public:
  virtual ~Source() = default;
  virtual std::string_view name() const = 0;
  // Open the skeleton, set .rodata (TargetFilter::setRodata), share the
  // targets map (TargetFilter::shareMap), size the ring, load.
  virtual Status open(const RecordConfig& config, TargetFilter& filter) = 0;
  // Attach the programs and add the ring buffer(s) to `poller`; records
  // arriving later are decoded into `sink`, which outlives the source's use.
  virtual Status attach(RingPoller& poller, EventSink& sink) = 0;
  // Read the kernel's drop counters and emit format::Lost rows for new drops.
  virtual void pollLost(EventSink& sink) = 0;
  // After the last poll: emit what is still pending (e.g. open intervals).
  virtual void finish(EventSink& /*sink*/) {}
  // The loaded BPF object (for --bpf-stats); null before open().
  virtual const bpf_object* bpfObject() const = 0;
  // A source the command line asked for by name (--trace, --syscalls, ...):
  // when it cannot start, the recording stops with its error instead of going
  // on without it.
  virtual bool required() const { return false; }
};

// Every source the command line asks for, in one visible list
// (recorder/sources/source_list.cc). `attacher`: attaches probes in
// programs exec'd during the recording (null: none is). `preload`: the rings
// of libincise-preload.so in the command (null: it runs without it).
std::vector<std::unique_ptr<Source>> createSources(const RecordConfig& config,
                                                   UprobeAttacher* attacher,
                                                   std::shared_ptr<PreloadRings> preload);

}  // namespace incise::recorder
