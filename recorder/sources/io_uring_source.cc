#include "recorder/sources/io_uring_source.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>

#include "bpf/latency.h"
#include "io_uring.skel.h"
#include "recorder/event_sink.h"
#include "recorder/kernel_btf.h"
#include "recorder/sources/latency_skeleton.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "io_uring";

// IORING_OP_READV -> "READV", from the kernel's own enum.
std::vector<format::LatencyProbe> opcodeNames() {
  std::vector<format::LatencyProbe> names;
  const btf* vmlinux = kernelBtf();
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
  return names;
}

class IoUringSource final : public Source {
 public:
  std::string_view name() const override { return kName; }
  bool required() const override { return true; }
  const bpf_object* bpfObject() const override { return object_.bpfObject(); }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    config_ = &config;
    INCISE_RETURN_IF_ERROR(
        object_.open(io_uring_bpf__open(), filter, ringBytesFor(config, 1), config, kName));
    if (int err = io_uring_bpf__load(object_.get())) return libbpfError("io_uring: load", err);
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    INCISE_RETURN_IF_ERROR(
        object_.attach({object_->progs.uring_submit, object_->progs.uring_complete}, kName));
    addLatencyProbes(sink, opcodeNames());
    return object_.start(poller, sink, *config_);
  }

  void pollLost(EventSink& sink) override { object_.poll(sink); }
  void finish(EventSink& sink) override { object_.finish(sink); }

 private:
  const RecordConfig* config_ = nullptr;
  LatencyObject<io_uring_bpf> object_{&io_uring_bpf__destroy};
};

}  // namespace

std::unique_ptr<Source> makeIoUringSource() {
  return std::make_unique<IoUringSource>();
}

}  // namespace incise::recorder
