// CPU samples source: see profile_source.h.
#include "recorder/sources/profile_source.h"

#include <linux/perf_event.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <span>

#include "base/unique_fd.h"
#include "profile.skel.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/online_cpus.h"
#include "recorder/perf_event_names.h"
#include "recorder/perf_event_open.h"
#include "recorder/ring_poller.h"
#include "recorder/sources/goroutine_ids.h"
#include "recorder/sources/skeleton_setup.h"

namespace incise::recorder {

namespace {

constexpr uint32_t kUserStackRingBytes = 16u << 20;

// The threads of `pid` now (its /proc/PID/task); empty when it is gone.
std::vector<int> threadsOf(uint32_t pid) {
  std::vector<int> tids;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    int tid = 0;
    std::string name = entry.path().filename().string();
    if (std::from_chars(name.data(), name.data() + name.size(), tid).ec == std::errc())
      tids.push_back(tid);
  }
  return tids;
}

perf_event_attr eventAttr(const PerfEventName& event) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = event.type;
  attr.config = event.config;
  return attr;
}

// -c N: a sample every N events; else -F: the kernel adapts the period to
// the frequency (each sample's period is then its own).
perf_event_attr samplingAttr(const PerfEventName& event, const RecordConfig& config) {
  perf_event_attr attr = eventAttr(event);
  if (config.sample_period != 0) {
    attr.sample_period = config.sample_period;
  } else {
    attr.freq = 1;
    attr.sample_freq = config.frequency_hz;
  }
  return attr;
}

const PerfEventName& cpuClock() {
  return **findPerfEvent("-e", "cpu-clock");
}

// The sampling event: -e's, or cycles where a hardware PMU can sample (probed
// on cpu 0), else cpu-clock.
const PerfEventName& samplingEvent(const RecordConfig& config) {
  if (!config.sample_event.empty()) {
    if (Result<const PerfEventName*> chosen = findPerfEvent("-e", config.sample_event))
      return **chosen;
  }
  const PerfEventName& cycles = **findPerfEvent("-e", "cycles");
  perf_event_attr attr = samplingAttr(cycles, config);
  attr.disabled = 1;
  UniqueFd probe(openPerfEvent(attr, -1, 0));
  return probe ? cycles : cpuClock();
}

// An event that cannot be opened, said in the words of the option that asked for it.
Error unopenable(std::string_view option, const PerfEventName& event, int error,
                 std::string_view instead) {
  std::string what = std::string(option) + " " + std::string(event.name);
  if (event.hardware() && (error == ENOENT || error == EOPNOTSUPP || error == ENODEV)) {
    return Error(ErrorCode::kUnsupported,
                 what +
                     ": a hardware event, and no hardware PMU was found on this machine "
                     "(perf_event_open: " +
                     std::strerror(error) + "; virtual machines often have none); use " +
                     std::string(instead));
  }
  return Error::fromErrno(error, what + ": perf_event_open");
}

class ProfileSource final : public Source {
 public:
  std::string_view name() const override { return "cpu samples"; }
  const bpf_object* bpfObject() const override { return skel_ ? skel_->obj : nullptr; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    config_ = &config;
    event_ = &samplingEvent(config);
    for (const std::string& name : config.counters) {
      Result<const PerfEventName*> counter = findPerfEvent("--counters", name);
      if (!counter) return counter.error();
      counters_.push_back(*counter);
    }
    if (config.target_kind == TargetKind::kPids || config.target_kind == TargetKind::kCommand)
      target_pids_ = filter.pids();
    skel_.reset(profile_bpf__open());
    if (!skel_) return libbpfError("cpu samples: open BPF object", errno);
    skel_->rodata->capture_stack = config.stacks;
    skel_->rodata->counter_count = static_cast<uint32_t>(counters_.size());
    skel_->rodata->user_stack_bytes = config.stacks ? config.user_stack_bytes : 0;
    goroutines_ = findGoroutineIds(config, filter.pids());
    if (!goroutines_.processes.empty() && skel_->rodata->user_stack_bytes > 0)
      goroutines_.notes.push_back(
          "goroutine ids: samples with stack copies (-g dwarf, hybrid) carry none");
    follow_go_execs_ = goProgramsMayStart(config) && skel_->rodata->user_stack_bytes == 0;
    skel_->rodata->go_targets = !goroutines_.processes.empty() || follow_go_execs_;
    if (Status s = prepareSkeleton(skel_.get(), filter, ringBytesFor(config, 2)); !s)
      return s.error().context("cpu samples");
    if (config.user_stack_bytes > 0) {
      // Records of up to 64 KiB: room for a burst across the flush interval.
      uint32_t ring = std::max<uint32_t>(config.ring_buffer_bytes, kUserStackRingBytes);
      if (int err = bpf_map__set_max_entries(skel_->maps.events, ring))
        return libbpfError("cpu samples: size the ring buffer", err);
      int cpus = libbpf_num_possible_cpus();
      if (cpus <= 0) return libbpfError("cpu samples: count possible cpus", -cpus);
      if (int err =
              bpf_map__set_max_entries(skel_->maps.user_stack_scratch, static_cast<uint32_t>(cpus)))
        return libbpfError("cpu samples: size the stack-copy buffers", err);
    }
    if (int err = profile_bpf__load(skel_.get())) return libbpfError("cpu samples: load", err);
    return goroutines_.fill(bpf_map__fd(skel_->maps.go_processes));
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    const bool copies_stacks = config_->stacks && config_->user_stack_bytes > 0;
    sink.processes().symbols().setEmbedUnwindTables(copies_stacks);
    for (const std::string& note : goroutines_.notes) sink.addNote(note);
    if (follow_go_execs_) followGoPrograms(sink.processes(), bpf_map__fd(skel_->maps.go_processes));
    if (!copies_stacks)
      sink.processes().symbols().setFullSymbolTableLimit(
          SymbolHarvest::kFramePointerFullTableLimit);
    if (config_->sample_event.empty() && event_->name == "cpu-clock")
      sink.addNote("cpu samples: no hardware PMU, sampling the software cpu-clock event");
    if (!target_pids_.empty()) {
      INCISE_RETURN_IF_ERROR(attachPerTask());
    } else {
      Result<std::vector<int>> cpus = onlineCpus();
      if (!cpus) return cpus.error().context("cpu samples");
      for (int cpu : *cpus)
        INCISE_RETURN_IF_ERROR(attachEvent(-1, cpu, "cpu " + std::to_string(cpu)));
    }
    drops_ = DropCounter(skel_->maps.drops);
    return poller.add(bpf_map__fd(skel_->maps.events), &ProfileSource::onRecord, this);
  }

  void pollLost(EventSink& sink) override { drops_.poll(sink); }

  // -p and -- CMD sample the targets' own cpu time, as `perf record -p` and
  // `perf record -- CMD` do: an event per thread that counts only while the
  // thread runs, inherited by the threads and processes it creates later. A
  // per-cpu event kept to the targets gives a tick that falls while the
  // target switches out (interrupts off, as in the scheduler source's own
  // switch program) to the next task instead, and counted some 5% fewer
  // samples than perf of a switch-heavy server in the same window.
  Status attachPerTask() {
    for (uint32_t pid : target_pids_) {
      for (int tid : threadsOf(pid))
        INCISE_RETURN_IF_ERROR(attachEvent(tid, -1, "thread " + std::to_string(tid)));
    }
    return Status::ok();
  }

  // The sampling event, then --counters in its group: the group is counted
  // only while the leader is, so the counts are the sampled thread's (or
  // cpu's), and the leader's sibling list holds them in this order.
  Status attachEvent(int pid, int cpu, const std::string& what) {
    perf_event_attr attr = samplingAttr(*event_, *config_);
    attr.inherit = pid >= 0;
    // Counters join a leader that is not yet counting: a member added to a
    // running per-cpu group of a clock counts nothing until the group is
    // scheduled in again, which a cpu's group may never be. Attaching the
    // program enables the leader (and its inherited copies).
    attr.disabled = counters_.empty() ? 0 : 1;
    int fd = openPerfEvent(attr, pid, cpu);
    if (fd < 0 && pid >= 0 && errno == ESRCH) return Status::ok();  // the thread exited meanwhile
    if (fd < 0) return libbpfError("cpu samples: perf_event_open on " + what, errno);
    perf_fds_.emplace_back(fd);
    for (const PerfEventName* counter : counters_) {
      perf_event_attr counter_attr = eventAttr(*counter);
      counter_attr.inherit = attr.inherit;
      int counter_fd = openPerfEvent(counter_attr, pid, cpu, 0, fd);
      if (counter_fd < 0 && pid >= 0 && errno == ESRCH) return Status::ok();
      if (counter_fd < 0) {
        return libbpfError(
            "cpu samples: counter " + std::string(counter->name) + ": perf_event_open on " + what,
            errno);
      }
      perf_fds_.emplace_back(counter_fd);
    }
    bpf_link* link = bpf_program__attach_perf_event(skel_->progs.on_cpu_sample, fd);
    if (!link) return libbpfError("cpu samples: attach to " + what, errno);
    links_.emplace_back(link);
    return Status::ok();
  }

 private:
  static int onRecord(void* context, void* data, size_t size) {
    auto* self = static_cast<ProfileSource*>(context);
    if (size >= sizeof(event_header) &&
        static_cast<const event_header*>(data)->type == EVENT_CPU_SAMPLE_USER_STACK) {
      self->onUserStackRecord(static_cast<const uint8_t*>(data), size);
      return 0;
    }
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
                                  .weight = e->period,
                                  .goid = e->goid,
                                  .counter0 = e->counters[0],
                                  .counter1 = e->counters[1],
                                  .counter2 = e->counters[2],
                                  .counter3 = e->counters[3]});
    return 0;
  }

  // -g dwarf / hybrid: frames, registers and the stack copy, bounds-checked.
  void onUserStackRecord(const uint8_t* data, size_t size) {
    constexpr size_t kFixed = offsetof(cpu_sample_user_stack_event, data);
    if (size < kFixed) return;
    // Ring-buffer records are 8-byte aligned; only the fixed part is read through the struct.
    const auto& e = *reinterpret_cast<const cpu_sample_user_stack_event*>(data);
    size_t kernel = std::min<size_t>(e.kernel_count, MAX_STACK_DEPTH);
    size_t user = std::min<size_t>(e.user_count, MAX_STACK_DEPTH);
    size_t frames_bytes = (kernel + user) * sizeof(uint64_t);
    if (kFixed + frames_bytes > size || e.stack_bytes > size - kFixed - frames_bytes) return;
    std::vector<uint64_t> frames(kernel + user);
    std::memcpy(frames.data(), data + kFixed, frames_bytes);
    std::span<const uint8_t> copy(data + kFixed + frames_bytes, e.stack_bytes);
    EventSink& sink = *sink_;
    sink.processes().noteThread(e.header.pid, e.header.tid, e.header.time);
    uint64_t stack = sink.internStack(e.header.pid, frames, kernel);
    if (e.user_ip != 0) {
      uint64_t ip = e.user_ip;
      sink.processes().noteUserFrames(e.header.pid, std::span<const uint64_t>(&ip, 1),
                                      e.header.time);
    }
    sink.processes().noteStackWords(e.header.pid, e.user_sp, copy, e.header.time);
    format::CpuSample row{.time = e.header.time,
                          .cpu = e.header.cpu,
                          .pid = e.header.pid,
                          .tid = e.header.tid,
                          .stack_id = stack,
                          .weight = e.period,
                          .counter0 = e.counters[0],
                          .counter1 = e.counters[1],
                          .counter2 = e.counters[2],
                          .counter3 = e.counters[3]};
    row.user_ip = e.user_ip;
    row.user_sp = e.user_sp;
    row.user_bp = e.user_bp;
    sink.append(row, copy);
  }

  const RecordConfig* config_ = nullptr;
  const PerfEventName* event_ = nullptr;
  std::vector<const PerfEventName*> counters_;  // --counters, in the group's order
  SkeletonPtr<profile_bpf> skel_{nullptr, &profile_bpf__destroy};
  std::vector<UniqueFd> perf_fds_;
  std::vector<LinkPtr> links_;         // after perf_fds_: detached before the events close
  std::vector<uint32_t> target_pids_;  // -p, -- CMD: sample per thread
  DropCounter drops_;
  EventSink* sink_ = nullptr;
  GoroutineIds goroutines_;       // Go targets: where their threads keep the goroutine
  bool follow_go_execs_ = false;  // Go programs started later get ids too
};

}  // namespace

std::string sampleEventName(const RecordConfig& config) {
  return std::string(samplingEvent(config).name);
}

Status checkSamplingEvents(const RecordConfig& config) {
  const PerfEventName& event = samplingEvent(config);
  perf_event_attr attr = samplingAttr(event, config);
  attr.disabled = 1;
  UniqueFd leader(openPerfEvent(attr, -1, 0));
  if (!leader) return unopenable("-e", event, errno, "a software event, e.g. -e cpu-clock");
  for (const std::string& name : config.counters) {
    INCISE_ASSIGN_OR_RETURN(const PerfEventName* counter, findPerfEvent("--counters", name));
    perf_event_attr counter_attr = eventAttr(*counter);
    UniqueFd member(openPerfEvent(counter_attr, -1, 0, 0, leader.get()));
    if (!member) {
      return unopenable("--counters", *counter, errno,
                        "software counters, e.g. --counters page-faults,context-switches");
    }
  }
  return Status::ok();
}

std::unique_ptr<Source> makeProfileSource() {
  return std::make_unique<ProfileSource>();
}

}  // namespace incise::recorder
