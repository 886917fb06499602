#include "recorder/sources/function_latency_source.h"

#include <bpf/libbpf.h>

#include <cerrno>

#include "bpf/latency.h"
#include "functions.skel.h"
#include "recorder/event_sink.h"
#include "recorder/libbpf_options.h"
#include "recorder/probes/function_probe_spec.h"
#include "recorder/sources/latency_skeleton.h"

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
  const bpf_object* bpfObject() const override { return object_.bpfObject(); }

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
    INCISE_RETURN_IF_ERROR(
        object_.open(functions_bpf__open(), filter, ringBytesFor(config, 2), config, kName));
    bool any_uretprobe = false, any_ret = false;
    for (const auto& p : probes_) (p.use_uretprobe ? any_uretprobe : any_ret) = true;
    bpf_program__set_autoload(object_->progs.function_return, any_uretprobe);
    bpf_program__set_autoload(object_->progs.function_ret_instruction, any_ret);
    if (int err = functions_bpf__load(object_.get())) return libbpfError("functions: load", err);
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
        INCISE_RETURN_IF_ERROR(attachUprobe(object_->progs.function_start, probe, pid,
                                            probe.start_offset, cookie, false, "start"));
        if (probe.use_uretprobe) {
          INCISE_RETURN_IF_ERROR(attachUprobe(object_->progs.function_return, probe, pid,
                                              probe.function_offset, cookie, true, "return"));
          continue;
        }
        for (uint64_t ret : probe.return_offsets) {
          INCISE_RETURN_IF_ERROR(attachUprobe(object_->progs.function_ret_instruction, probe, pid,
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
    return object_.start(poller, sink, *config_);
  }

  void pollLost(EventSink& sink) override { object_.poll(sink); }
  void finish(EventSink& sink) override { object_.finish(sink); }

 private:
  Status attachUprobe(bpf_program* program, const ResolvedFunctionProbe& probe, int pid,
                      uint64_t offset, uint64_t cookie, bool retprobe, const char* what) {
    auto opts = libbpfOptions<bpf_uprobe_opts>();
    opts.bpf_cookie = cookie;
    opts.retprobe = retprobe;
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
    object_.keep(link);
    return Status::ok();
  }

  const RecordConfig* config_ = nullptr;
  std::vector<ResolvedFunctionProbe> probes_;
  std::vector<int> pids_;
  LatencyObject<functions_bpf> object_{&functions_bpf__destroy};
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
