#include "recorder/sources/block_io_source.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <fstream>

#include "block_io.skel.h"
#include "bpf/latency.h"
#include "recorder/event_sink.h"
#include "recorder/kernel_btf.h"
#include "recorder/sources/latency_skeleton.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "block I/O";
constexpr unsigned kMinorBits = 20;

// block_io_start came with 6.5; without it the thread is the one issuing.
bool kernelHasTracepoint(const char* name) {
  const btf* kernel = kernelBtf();
  return kernel && btf__find_by_name_kind(kernel, (std::string("btf_trace_") + name).c_str(),
                                          BTF_KIND_TYPEDEF) > 0;
}

class BlockIoSource final : public Source {
 public:
  std::string_view name() const override { return kName; }
  bool required() const override { return true; }
  const bpf_object* bpfObject() const override { return object_.bpfObject(); }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    config_ = &config;
    INCISE_RETURN_IF_ERROR(
        object_.open(block_io_bpf__open(), filter, ringBytesFor(config, 1), config, kName));
    bpf_program__set_autoload(object_->progs.block_start, kernelHasTracepoint("block_io_start"));
    if (int err = block_io_bpf__load(object_.get())) return libbpfError("block I/O: load", err);
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    INCISE_RETURN_IF_ERROR(object_.attach(
        {object_->progs.block_start, object_->progs.block_issue, object_->progs.block_complete},
        kName));
    return object_.start(poller, sink, *config_, [](uint64_t dev) {
      return std::optional<format::LatencyProbe>({.name = blockDeviceName(dev)});
    });
  }

  void pollLost(EventSink& sink) override { object_.poll(sink); }
  void finish(EventSink& sink) override { object_.finish(sink); }

 private:
  const RecordConfig* config_ = nullptr;
  LatencyObject<block_io_bpf> object_{&block_io_bpf__destroy};
};

}  // namespace

std::string blockDeviceName(uint64_t kernel_dev, const std::string& sys_root) {
  std::string numbers = std::to_string(kernel_dev >> kMinorBits) + ":" +
                        std::to_string(kernel_dev & ((1u << kMinorBits) - 1));
  std::ifstream uevent(sys_root + "/dev/block/" + numbers + "/uevent");
  std::string line;
  while (std::getline(uevent, line)) {
    if (line.rfind("DEVNAME=", 0) == 0 && line.size() > 8) return line.substr(8);
  }
  return numbers;
}

std::unique_ptr<Source> makeBlockIoSource() {
  return std::make_unique<BlockIoSource>();
}

}  // namespace incise::recorder
