#include "recorder/io_uring_source.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>

#include "bpf/latency.h"
#include "io_uring.skel.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/latency_output.h"
#include "recorder/latency_skeleton.h"
#include "recorder/ring_poller.h"
#include "recorder/skeleton_setup.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "io_uring";

// IORING_OP_READV -> "READV", from the kernel's own enum.
std::vector<format::LatencyProbe> opcodeNames() {
  std::vector<format::LatencyProbe> names;
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return names;
  int id = btf__find_by_name_kind(vmlinux, "io_uring_op", BTF_KIND_ENUM);
  if (id > 0) {
    const btf_type* type = btf__type_by_id(vmlinux, id);
    const struct btf_enum* values = btf_enum(type);
    for (int i = 0; i < btf_vlen(type); ++i) {
      std::string name = btf__name_by_offset(vmlinux, values[i].name_off);
      if (name == "IORING_OP_LAST") continue;
      if (name.rfind("IORING_OP_", 0) == 0) name = name.substr(10);
      names.push_back({.source = LATENCY_IO_URING,
                       .id = static_cast<uint64_t>(static_cast<uint32_t>(values[i].val)),
                       .name = name});
    }
  }
  btf__free(vmlinux);
  return names;
}

class IoUringSource final : public Source {
 public:
  std::string_view name() const override { return kName; }
  bool required() const override { return true; }
  const bpf_object* bpfObject() const override { return skel_ ? skel_->obj : nullptr; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    config_ = &config;
    skel_.reset(io_uring_bpf__open());
    if (!skel_) return libbpfError("io_uring: open", errno);
    if (Status s = prepareSkeleton(skel_.get(), filter, ringBytesFor(config, 1)); !s)
      return s.error().context(std::string(kName));
    setLatencyRodata(skel_->rodata, config);
    if (int err = io_uring_bpf__load(skel_.get())) return libbpfError("io_uring: load", err);
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    for (bpf_program* program : {skel_->progs.uring_submit, skel_->progs.uring_complete}) {
      bpf_link* link = bpf_program__attach(program);
      if (!link)
        return libbpfError(std::string("io_uring: attach ") + bpf_program__name(program), errno);
      links_.emplace_back(link);
    }
    addLatencyProbes(sink, opcodeNames());
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
  SkeletonPtr<io_uring_bpf> skel_{nullptr, &io_uring_bpf__destroy};
  std::vector<LinkPtr> links_;
  DropCounter drops_;
  LatencyOutput output_;
};

}  // namespace

std::unique_ptr<Source> makeIoUringSource() {
  return std::make_unique<IoUringSource>();
}

}  // namespace incise::recorder
