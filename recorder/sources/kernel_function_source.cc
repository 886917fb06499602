#include "recorder/sources/kernel_function_source.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

#include "bpf/latency.h"
#include "kernel_functions.skel.h"
#include "recorder/event_sink.h"
#include "recorder/probes/function_probe_spec.h"
#include "recorder/sources/latency_skeleton.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "kernel functions";

struct KernelFunction {
  FunctionProbeSpec spec;
  uint32_t id = 0;
  LatencyObject<kernel_functions_bpf> object{&kernel_functions_bpf__destroy};
};

class KernelFunctionSource final : public Source {
 public:
  std::string_view name() const override { return kName; }
  const bpf_object* bpfObject() const override {
    return functions_.empty() ? nullptr : functions_.front()->object.bpfObject();
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
      INCISE_RETURN_IF_ERROR(function->object.open(kernel_functions_bpf__open(), filter,
                                                   ringBytesFor(config, 1), config, kName));
      auto* skel = function->object.get();
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
      INCISE_RETURN_IF_ERROR(f->object.attach(
          {f->object->progs.kernel_function_entry, f->object->progs.kernel_function_exit},
          "--trace " + f->spec.text));
      names.push_back(
          {.source = LATENCY_FUNCTION, .id = f->id, .name = f->spec.symbol, .object = "[kernel]"});
      INCISE_RETURN_IF_ERROR(f->object.start(poller, sink, *config_));
    }
    addLatencyProbes(sink, std::move(names));
    return Status::ok();
  }

  void pollLost(EventSink& sink) override {
    for (auto& f : functions_) f->object.poll(sink);
  }

  void finish(EventSink& sink) override {
    for (auto& f : functions_) f->object.finish(sink);
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
