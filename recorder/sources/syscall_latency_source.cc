#include "recorder/sources/syscall_latency_source.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>

#include "bpf/latency.h"
#include "recorder/event_sink.h"
#include "recorder/probes/syscall_table.h"
#include "recorder/sources/latency_skeleton.h"
#include "syscalls.skel.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "syscalls";

class SyscallLatencySource final : public Source {
 public:
  std::string_view name() const override { return kName; }
  bool required() const override { return true; }
  const bpf_object* bpfObject() const override { return object_.bpfObject(); }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    config_ = &config;
    Result<std::vector<uint32_t>> numbers = syscallNumbers(config.syscalls);
    if (!numbers) return numbers.error();
    numbers_ = numbers.take();
    INCISE_RETURN_IF_ERROR(
        object_.open(syscalls_bpf__open(), filter, ringBytesFor(config, 2), config, kName));
    if (int err = syscalls_bpf__load(object_.get())) return libbpfError("syscalls: load", err);
    int fd = bpf_map__fd(object_->maps.syscall_traced);
    for (uint32_t nr : numbers_) {
      uint8_t on = 1;
      if (bpf_map_update_elem(fd, &nr, &on, BPF_ANY) != 0)
        return libbpfError("syscalls: choose syscall " + std::to_string(nr), errno);
    }
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    INCISE_RETURN_IF_ERROR(
        object_.attach({object_->progs.syscall_enter, object_->progs.syscall_exit}, kName));
    std::vector<format::LatencyProbe> names;
    for (uint32_t nr : numbers_)
      names.push_back({.source = LATENCY_SYSCALL, .id = nr, .name = std::string(syscallName(nr))});
    addLatencyProbes(sink, std::move(names));
    return object_.start(poller, sink, *config_);
  }

  void pollLost(EventSink& sink) override { object_.poll(sink); }
  void finish(EventSink& sink) override { object_.finish(sink); }

 private:
  const RecordConfig* config_ = nullptr;
  std::vector<uint32_t> numbers_;
  LatencyObject<syscalls_bpf> object_{&syscalls_bpf__destroy};
};

}  // namespace

std::unique_ptr<Source> makeSyscallLatencySource() {
  return std::make_unique<SyscallLatencySource>();
}

}  // namespace incise::recorder
