// CPU samples source: see profile_source.h.
#include "recorder/profile_source.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "profile.skel.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/ring_poller.h"
#include "recorder/skeleton_setup.h"

namespace incise::recorder {

namespace {

int perfEventOpen(perf_event_attr* attr, int cpu) {
  return static_cast<int>(syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

perf_event_attr samplingAttr(bool hardware, uint32_t frequency_hz) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = hardware ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
  attr.config = hardware ? uint64_t{PERF_COUNT_HW_CPU_CYCLES} : uint64_t{PERF_COUNT_SW_CPU_CLOCK};
  attr.freq = 1;
  attr.sample_freq = frequency_hz;
  return attr;
}

class ProfileSource final : public Source {
 public:
  std::string_view name() const override { return "cpu samples"; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    config_ = &config;
    hardware_ = sampleEventName(config.frequency_hz) == "cycles";
    skel_.reset(profile_bpf__open());
    if (!skel_) return libbpfError("cpu samples: open BPF object", errno);
    skel_->rodata->capture_stack = config.stacks;
    if (Status s = prepareSkeleton(skel_.get(), config, filter); !s)
      return s.error().context("cpu samples");
    if (int err = profile_bpf__load(skel_.get())) return libbpfError("cpu samples: load", err);
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    if (!hardware_)
      sink.addNote("cpu samples: no hardware PMU, sampling the software cpu-clock event");
    Result<std::vector<int>> cpus = onlineCpus();
    if (!cpus) return cpus.error().context("cpu samples");
    for (int cpu : *cpus) {
      perf_event_attr attr = samplingAttr(hardware_, config_->frequency_hz);
      int fd = perfEventOpen(&attr, cpu);
      if (fd < 0) {
        return libbpfError("cpu samples: perf_event_open on cpu " + std::to_string(cpu), errno);
      }
      perf_fds_.push_back(fd);
      bpf_link* link = bpf_program__attach_perf_event(skel_->progs.on_cpu_sample, fd);
      if (!link) return libbpfError("cpu samples: attach to cpu " + std::to_string(cpu), errno);
      links_.emplace_back(link);
    }
    drops_ = DropCounter(skel_->maps.drops);
    return poller.add(bpf_map__fd(skel_->maps.events), &ProfileSource::onRecord, this);
  }

  void pollLost(EventSink& sink) override { drops_.poll(sink); }

  ~ProfileSource() override {
    links_.clear();
    for (int fd : perf_fds_) close(fd);
  }

 private:
  static int onRecord(void* context, void* data, size_t size) {
    auto* self = static_cast<ProfileSource*>(context);
    constexpr size_t kFixed = offsetof(cpu_sample_event, stack.frames);
    if (size < kFixed) return 0;
    const auto* e = static_cast<const cpu_sample_event*>(data);
    size_t frames = size_t{e->stack.kernel_count} + e->stack.user_count;
    if (frames > 2 * MAX_STACK_DEPTH || kFixed + frames * sizeof(uint64_t) > size) return 0;
    EventSink& sink = *self->sink_;
    sink.processes().noteThread(e->header.pid, e->header.tid, e->header.time);
    uint64_t stack = sink.internStack(e->header.pid, e->stack);
    sink.append(format::CpuSample{.time = e->header.time,
                                  .cpu = e->header.cpu,
                                  .pid = e->header.pid,
                                  .tid = e->header.tid,
                                  .stack_id = stack,
                                  .weight = e->period});
    return 0;
  }

  static Result<std::vector<int>> onlineCpus() {
    std::ifstream in("/sys/devices/system/cpu/online");
    std::string list;
    if (!std::getline(in, list)) return Error("cannot read /sys/devices/system/cpu/online");
    std::vector<int> cpus;
    std::istringstream ranges(list);
    std::string range;
    while (std::getline(ranges, range, ',')) {
      int first = 0, last = 0;
      if (sscanf(range.c_str(), "%d-%d", &first, &last) == 2) {
        for (int c = first; c <= last; ++c) cpus.push_back(c);
      } else if (sscanf(range.c_str(), "%d", &first) == 1) {
        cpus.push_back(first);
      }
    }
    if (cpus.empty()) return Error("no online cpus in /sys/devices/system/cpu/online");
    return cpus;
  }

  const RecordConfig* config_ = nullptr;
  bool hardware_ = false;
  SkeletonPtr<profile_bpf> skel_{nullptr, &profile_bpf__destroy};
  std::vector<int> perf_fds_;
  std::vector<LinkPtr> links_;
  DropCounter drops_;
  EventSink* sink_ = nullptr;
};

}  // namespace

std::string sampleEventName(uint32_t frequency_hz) {
  perf_event_attr attr = samplingAttr(true, frequency_hz);
  attr.disabled = 1;
  int fd = perfEventOpen(&attr, 0);
  if (fd < 0) return "cpu-clock";
  close(fd);
  return "cycles";
}

std::unique_ptr<Source> makeProfileSource() {
  return std::make_unique<ProfileSource>();
}

}  // namespace incise::recorder
