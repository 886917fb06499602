#include "recorder/syscall_latency_source.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>

#include "bpf/latency.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/latency_output.h"
#include "recorder/latency_skeleton.h"
#include "recorder/ring_poller.h"
#include "recorder/skeleton_setup.h"
#include "recorder/syscall_table.h"
#include "syscalls.skel.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "syscalls";

class SyscallLatencySource final : public Source {
 public:
  std::string_view name() const override { return kName; }
  bool required() const override { return true; }
  const bpf_object* bpfObject() const override { return skel_ ? skel_->obj : nullptr; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    config_ = &config;
    Result<std::vector<uint32_t>> numbers = syscallNumbers(config.syscalls);
    if (!numbers) return numbers.error();
    numbers_ = numbers.take();
    skel_.reset(syscalls_bpf__open());
    if (!skel_) return libbpfError("syscalls: open", errno);
    if (Status s = prepareSkeleton(skel_.get(), filter, ringBytesFor(config, 2)); !s)
      return s.error().context(std::string(kName));
    setLatencyRodata(skel_->rodata, config);
    if (int err = syscalls_bpf__load(skel_.get())) return libbpfError("syscalls: load", err);
    int fd = bpf_map__fd(skel_->maps.syscall_traced);
    for (uint32_t nr : numbers_) {
      uint8_t on = 1;
      if (bpf_map_update_elem(fd, &nr, &on, BPF_ANY) != 0)
        return libbpfError("syscalls: choose syscall " + std::to_string(nr), errno);
    }
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    for (bpf_program* program : {skel_->progs.syscall_enter, skel_->progs.syscall_exit}) {
      bpf_link* link = bpf_program__attach(program);
      if (!link)
        return libbpfError(std::string("syscalls: attach ") + bpf_program__name(program), errno);
      links_.emplace_back(link);
    }
    std::vector<format::LatencyProbe> names;
    for (uint32_t nr : numbers_)
      names.push_back({.source = LATENCY_SYSCALL, .id = nr, .name = std::string(syscallName(nr))});
    addLatencyProbes(sink, std::move(names));
    drops_ = DropCounter(skel_->maps.drops);
    output_.bind(sink, latencyMaps(skel_.get(), *config_));
    return poller.add(bpf_map__fd(skel_->maps.events), &LatencyOutput::onRecord, &output_);
  }

  void pollLost(EventSink& sink) override {
    drops_.poll(sink);
    output_.poll(sink);
  }

  void finish(EventSink& sink) override {
    links_.clear();
    output_.finish(sink);
  }

 private:
  const RecordConfig* config_ = nullptr;
  std::vector<uint32_t> numbers_;
  SkeletonPtr<syscalls_bpf> skel_{nullptr, &syscalls_bpf__destroy};
  std::vector<LinkPtr> links_;
  DropCounter drops_;
  LatencyOutput output_;
};

}  // namespace

std::unique_ptr<Source> makeSyscallLatencySource() {
  return std::make_unique<SyscallLatencySource>();
}

}  // namespace incise::recorder
