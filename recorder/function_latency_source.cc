#include "recorder/function_latency_source.h"

#include <bpf/libbpf.h>

#include <cerrno>

#include "bpf/latency.h"
#include "functions.skel.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/function_probe_spec.h"
#include "recorder/latency_output.h"
#include "recorder/latency_skeleton.h"
#include "recorder/ring_poller.h"
#include "recorder/skeleton_setup.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "functions";
constexpr int kKernelENOTSUPP = 524;

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(value));
  return text;
}

class FunctionLatencySource final : public Source {
 public:
  std::string_view name() const override { return kName; }
  bool required() const override { return true; }
  const bpf_object* bpfObject() const override { return skel_ ? skel_->obj : nullptr; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    config_ = &config;
    uint32_t id = 0;
    for (const std::string& text : config.trace_functions) {
      Result<FunctionProbeSpec> spec = parseFunctionProbe(text);
      if (!spec) return spec.error();
      ++id;
      if (spec->kernel()) continue;
      Result<ResolvedFunctionProbe> probe = resolveFunctionProbe(*spec, id);
      if (!probe) return probe.error();
      probes_.push_back(probe.take());
    }
    skel_.reset(functions_bpf__open());
    if (!skel_) return libbpfError("functions: open", errno);
    if (Status s = prepareSkeleton(skel_.get(), filter, ringBytesFor(config, 2)); !s)
      return s.error().context(std::string(kName));
    setLatencyRodata(skel_->rodata, config);
    bool any_uretprobe = false, any_ret = false;
    for (const auto& p : probes_) (p.use_uretprobe ? any_uretprobe : any_ret) = true;
    bpf_program__set_autoload(skel_->progs.function_return, any_uretprobe);
    bpf_program__set_autoload(skel_->progs.function_ret_instruction, any_ret);
    if (int err = functions_bpf__load(skel_.get())) return libbpfError("functions: load", err);
    pids_ = config.target_kind == TargetKind::kPids
                ? std::vector<int>(config.pids.begin(), config.pids.end())
                : std::vector<int>{-1};
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    std::vector<format::LatencyProbe> names;
    for (const ResolvedFunctionProbe& probe : probes_) {
      uint64_t cookie = probe.id | (probe.go ? FUNCTION_GO : 0) |
                        (probe.spec.offset == 0 ? FUNCTION_AT_ENTRY : 0) |
                        (probe.sp_delta << FUNCTION_SP_DELTA_SHIFT);
      for (int pid : pids_) {
        INCISE_RETURN_IF_ERROR(attachUprobe(skel_->progs.function_start, probe, pid,
                                            probe.start_offset, cookie, false, "start"));
        if (probe.use_uretprobe) {
          INCISE_RETURN_IF_ERROR(attachUprobe(skel_->progs.function_return, probe, pid,
                                              probe.function_offset, cookie, true, "return"));
          continue;
        }
        for (uint64_t ret : probe.return_offsets) {
          INCISE_RETURN_IF_ERROR(attachUprobe(skel_->progs.function_ret_instruction, probe, pid,
                                              ret, cookie, false, "RET"));
        }
      }
      names.push_back({.source = LATENCY_FUNCTION,
                       .id = probe.id,
                       .name = probe.spec.symbol,
                       .object = probe.spec.binary,
                       .offset = probe.spec.offset,
                       .is_go = probe.go});
    }
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
    links_.clear();  // nothing adds to the histograms once detached
    output_.finish(sink);
  }

 private:
  Status attachUprobe(bpf_program* program, const ResolvedFunctionProbe& probe, int pid,
                      uint64_t offset, uint64_t cookie, bool retprobe, const char* what) {
    LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie, .retprobe = retprobe);
    bpf_link* link =
        bpf_program__attach_uprobe_opts(program, pid, probe.spec.binary.c_str(), offset, &opts);
    if (!link) {
      int error = errno;
      std::string step = "--trace " + probe.spec.text + ": " + what + " probe at file offset " +
                         hex(offset) + " of " + probe.spec.binary;
      // ENOTSUPP (kernel-internal 524): x86 uprobes refuse some instructions
      // (a lock-prefixed one, for example) at the probed address.
      if (error == kKernelENOTSUPP)
        return Error(step + ": the kernel cannot probe the instruction there" +
                     (probe.spec.offset == 0 ? " (try FUNC+OFFSET past it)" : ""));
      return libbpfError(step, error);
    }
    links_.emplace_back(link);
    return Status::ok();
  }

  const RecordConfig* config_ = nullptr;
  std::vector<ResolvedFunctionProbe> probes_;
  std::vector<int> pids_;
  SkeletonPtr<functions_bpf> skel_{nullptr, &functions_bpf__destroy};
  std::vector<LinkPtr> links_;
  DropCounter drops_;
  LatencyOutput output_;
};

}  // namespace

bool hasUserFunctions(const RecordConfig& config) {
  for (const std::string& text : config.trace_functions) {
    Result<FunctionProbeSpec> spec = parseFunctionProbe(text);
    if (spec && !spec->kernel()) return true;
  }
  return false;
}

std::unique_ptr<Source> makeFunctionLatencySource() {
  return std::make_unique<FunctionLatencySource>();
}

}  // namespace incise::recorder
