#include "recorder/block_io_source.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <fstream>

#include "block_io.skel.h"
#include "bpf/latency.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/latency_output.h"
#include "recorder/latency_skeleton.h"
#include "recorder/ring_poller.h"
#include "recorder/skeleton_setup.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "block I/O";
constexpr unsigned kMinorBits = 20;

// block_io_start came with 6.5; without it the thread is the one issuing.
bool kernelHasTracepoint(const char* name) {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return false;
  bool found = btf__find_by_name_kind(vmlinux, (std::string("btf_trace_") + name).c_str(),
                                      BTF_KIND_TYPEDEF) > 0;
  btf__free(vmlinux);
  return found;
}

class BlockIoSource final : public Source {
 public:
  std::string_view name() const override { return kName; }
  bool required() const override { return true; }
  const bpf_object* bpfObject() const override { return skel_ ? skel_->obj : nullptr; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    config_ = &config;
    skel_.reset(block_io_bpf__open());
    if (!skel_) return libbpfError("block I/O: open", errno);
    if (Status s = prepareSkeleton(skel_.get(), filter, ringBytesFor(config, 1)); !s)
      return s.error().context(std::string(kName));
    setLatencyRodata(skel_->rodata, config);
    bpf_program__set_autoload(skel_->progs.block_start, kernelHasTracepoint("block_io_start"));
    if (int err = block_io_bpf__load(skel_.get())) return libbpfError("block I/O: load", err);
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    for (bpf_program* program :
         {skel_->progs.block_start, skel_->progs.block_issue, skel_->progs.block_complete}) {
      if (!bpf_program__autoload(program)) continue;
      bpf_link* link = bpf_program__attach(program);
      if (!link)
        return libbpfError(std::string("block I/O: attach ") + bpf_program__name(program), errno);
      links_.emplace_back(link);
    }
    drops_ = DropCounter(skel_->maps.drops);
    output_.bind(sink, latencyMaps(skel_.get(), *config_), [](uint64_t dev) {
      return std::optional<format::LatencyProbe>({.name = blockDeviceName(dev)});
    });
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
  SkeletonPtr<block_io_bpf> skel_{nullptr, &block_io_bpf__destroy};
  std::vector<LinkPtr> links_;
  DropCounter drops_;
  LatencyOutput output_;
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
