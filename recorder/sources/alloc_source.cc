#include "recorder/sources/alloc_source.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <span>

#include "alloc.skel.h"
#include "base/file_identity.h"
#include "bpf/alloc.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/libbpf_error.h"
#include "recorder/libbpf_options.h"
#include "recorder/preload_library.h"
#include "recorder/probes/preload_library.h"
#include "recorder/ring_poller.h"
#include "recorder/sources/skeleton_setup.h"
#include "recorder/sources/stack_event_size.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "alloc";

// The libraries to probe: one path per distinct file.
Result<std::vector<std::string>> preloadLibraries(const RecordConfig& config) {
  std::vector<std::string> paths;
  if (config.target_kind != TargetKind::kPids) {
    INCISE_ASSIGN_OR_RETURN(std::string installed, findPreloadLibrary());
    paths.push_back(std::move(installed));
    return paths;
  }
  std::set<FileIdentity> seen;
  for (uint32_t pid : config.pids) {
    INCISE_ASSIGN_OR_RETURN(std::string mapped, preloadLibraryOfProcess(pid));
    std::optional<FileIdentity> file = fileIdentity(mapped);
    if (file && !seen.insert(*file).second) continue;
    paths.push_back(std::move(mapped));
  }
  return paths;
}

class AllocSource final : public Source {
 public:
  std::string_view name() const override { return kName; }
  const bpf_object* bpfObject() const override { return skel_ ? skel_->obj : nullptr; }
  bool required() const override { return true; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    Result<std::vector<std::string>> libraries = preloadLibraries(config);
    if (!libraries) return libraries.error().context("--alloc");
    libraries_ = libraries.take();
    skel_.reset(alloc_bpf__open());
    if (!skel_) return libbpfError("alloc: open", errno);
    if (Status s = prepareSkeleton(skel_.get(), filter, ringBytesFor(config, 1)); !s)
      return s.error().context("alloc");
    if (int err = alloc_bpf__load(skel_.get())) return libbpfError("alloc: load", err);
    drops_ = DropCounter(skel_->maps.drops);
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    for (const std::string& library : libraries_) {
      INCISE_RETURN_IF_ERROR(
          attachMarker(skel_->progs.alloc_sampled, library, ALLOC_SAMPLED_SYMBOL));
      INCISE_RETURN_IF_ERROR(attachMarker(skel_->progs.free_sampled, library, FREE_SAMPLED_SYMBOL));
    }
    return poller.add(bpf_map__fd(skel_->maps.events), &AllocSource::onRecord, this);
  }

  void pollLost(EventSink& sink) override { drops_.poll(sink); }

  void finish(EventSink& sink) override {
    if (samples_ == 0)
      sink.addNote("alloc: no allocation was sampled: a process sampled must run " +
                   std::string(kPreloadLibraryName) + " with INCISE_ALLOC_SAMPLE_BYTES set");
  }

 private:
  // Every process that maps `library` hits the probe; the programs keep targets'.
  Status attachMarker(bpf_program* program, const std::string& library, const char* symbol) {
    auto opts = libbpfOptions<bpf_uprobe_opts>();
    opts.func_name = symbol;
    bpf_link* link = bpf_program__attach_uprobe_opts(program, -1, library.c_str(), 0, &opts);
    if (!link)
      return libbpfError("alloc: attach uprobe " + std::string(symbol) + " in " + library, errno);
    links_.emplace_back(link);
    return Status::ok();
  }

  static int onRecord(void* context, void* data, size_t size) {
    static_cast<AllocSource*>(context)->decode(data, size);
    return 0;
  }

  void decode(const void* data, size_t size) {
    if (size < sizeof(event_header)) return;
    const auto* header = static_cast<const event_header*>(data);
    if (header->type == EVENT_FREE && size >= sizeof(free_event)) {
      const auto* e = static_cast<const free_event*>(data);
      sink_->append(format::Free{.time = e->header.time,
                                 .pid = e->header.pid,
                                 .tid = e->header.tid,
                                 .address = e->address});
      return;
    }
    const auto* e = static_cast<const alloc_event*>(data);
    if (header->type != EVENT_ALLOC || stackEventSize(*e, size) == 0) return;
    sink_->processes().noteThread(e->header.pid, e->header.tid, e->header.time);
    ++samples_;
    sink_->append(format::Allocation{.time = e->header.time,
                                     .pid = e->header.pid,
                                     .tid = e->header.tid,
                                     .address = e->address,
                                     .size = e->size,
                                     .weight = e->weight,
                                     .stack_id = internCallerStack(*e)});
  }

  // The stack from the allocator's caller on: the library's frames (the
  // marker, the interposed function) are cut at the caller's return
  // address; a walk that never reached it is kept whole.
  uint64_t internCallerStack(const alloc_event& e) {
    const auto* frames = reinterpret_cast<const uint64_t*>(e.stack.frames);
    std::span<const uint64_t> user(frames, e.stack.user_count);
    auto caller = std::find(user.begin(), user.end(), e.caller);
    if (caller != user.end()) user = user.subspan(static_cast<size_t>(caller - user.begin()));
    return sink_->internStack(e.header.pid, user, 0);
  }

  std::vector<std::string> libraries_;
  SkeletonPtr<alloc_bpf> skel_{nullptr, &alloc_bpf__destroy};
  std::vector<LinkPtr> links_;
  DropCounter drops_;
  EventSink* sink_ = nullptr;
  uint64_t samples_ = 0;
};

}  // namespace

std::unique_ptr<Source> makeAllocSource() {
  return std::make_unique<AllocSource>();
}

}  // namespace incise::recorder
