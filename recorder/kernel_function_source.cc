#include "recorder/kernel_function_source.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

#include "bpf/latency.h"
#include "kernel_functions.skel.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/function_probe_spec.h"
#include "recorder/latency_output.h"
#include "recorder/latency_skeleton.h"
#include "recorder/ring_poller.h"
#include "recorder/skeleton_setup.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "kernel functions";

struct KernelFunction {
  FunctionProbeSpec spec;
  uint32_t id = 0;
  SkeletonPtr<kernel_functions_bpf> skel{nullptr, &kernel_functions_bpf__destroy};
  std::vector<LinkPtr> links;
  DropCounter drops;
  LatencyOutput output;
};

class KernelFunctionSource final : public Source {
 public:
  std::string_view name() const override { return kName; }
  const bpf_object* bpfObject() const override {
    return functions_.empty() ? nullptr : functions_.front()->skel->obj;
  }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    config_ = &config;
    uint32_t id = 0;
    for (const std::string& text : config.trace_functions) {
      Result<FunctionProbeSpec> spec = parseFunctionProbe(text);
      ++id;
      if (!spec || !spec->kernel()) continue;
      auto function = std::make_unique<KernelFunction>();
      function->spec = *spec;
      function->id = id;
      function->skel.reset(kernel_functions_bpf__open());
      auto* skel = function->skel.get();
      if (!skel) return libbpfError("kernel functions: open", errno);
      if (Status s = prepareSkeleton(skel, filter, ringBytesFor(config, 1)); !s)
        return s.error().context(std::string(kName));
      setLatencyRodata(skel->rodata, config);
      skel->rodata->probe_id = id;
      for (bpf_program* program :
           {skel->progs.kernel_function_entry, skel->progs.kernel_function_exit}) {
        if (int err = bpf_program__set_attach_target(program, 0, spec->symbol.c_str()))
          return libbpfError("--trace " + text + ": no kernel function '" + spec->symbol + "'",
                             err);
      }
      if (int err = kernel_functions_bpf__load(skel)) {
        if (err == -EPERM || err == -EACCES || err == -EOPNOTSUPP || err == -524 /* ENOTSUPP */)
          return Error("--trace " + text +
                       ": this kernel refuses fentry/fexit programs (load: " + std::strerror(-err) +
                       ") and kernel functions have no other probe here (no kprobes); "
                       "kernel function latency is not recorded");
        return libbpfError("--trace " + text + ": load", err);
      }
      functions_.push_back(std::move(function));
    }
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    std::vector<format::LatencyProbe> names;
    for (auto& f : functions_) {
      for (bpf_program* program :
           {f->skel->progs.kernel_function_entry, f->skel->progs.kernel_function_exit}) {
        bpf_link* link = bpf_program__attach(program);
        if (!link) return libbpfError("--trace " + f->spec.text + ": attach", errno);
        f->links.emplace_back(link);
      }
      names.push_back(
          {.source = LATENCY_FUNCTION, .id = f->id, .name = f->spec.symbol, .object = "[kernel]"});
      f->drops = DropCounter(f->skel->maps.drops);
      f->output.bind(sink, latencyMaps(f->skel.get(), *config_));
      INCISE_RETURN_IF_ERROR(
          poller.add(bpf_map__fd(f->skel->maps.events), &LatencyOutput::onRecord, &f->output));
    }
    addLatencyProbes(sink, std::move(names));
    return Status::ok();
  }

  void pollLost(EventSink& sink) override {
    for (auto& f : functions_) {
      f->drops.poll(sink);
      f->output.poll(sink);
    }
  }

  void finish(EventSink& sink) override {
    for (auto& f : functions_) {
      f->links.clear();
      f->output.finish(sink);
    }
  }

 private:
  const RecordConfig* config_ = nullptr;
  std::vector<std::unique_ptr<KernelFunction>> functions_;
};

}  // namespace

bool hasKernelFunctions(const RecordConfig& config) {
  for (const std::string& text : config.trace_functions) {
    Result<FunctionProbeSpec> spec = parseFunctionProbe(text);
    if (spec && spec->kernel()) return true;
  }
  return false;
}

std::unique_ptr<Source> makeKernelFunctionSource() {
  return std::make_unique<KernelFunctionSource>();
}

}  // namespace incise::recorder
