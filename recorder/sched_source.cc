// Scheduler and process-life source: see sched_source.h.
#include "recorder/sched_source.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/ring_poller.h"
#include "recorder/skeleton_setup.h"
#include "sched.skel.h"

namespace incise::recorder {

namespace {

__u32 schedStackMode(const RecordConfig& config) {
  if (!config.stacks) return SCHED_STACKS_OFF;
  switch (config.sched_stacks) {
    case SchedStacks::kOff:
      return SCHED_STACKS_OFF;
    case SchedStacks::kBlocked:
      return SCHED_STACKS_BLOCKED;
    case SchedStacks::kAll:
      return SCHED_STACKS_ALL;
  }
  return SCHED_STACKS_BLOCKED;
}

// tp_btf needs the kernel's BTF; without it the raw_tp twins are loaded.
bool kernelHasBtf() {
  return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

std::string commOf(const char (&comm)[TASK_COMM_LEN]) {
  return std::string(comm, strnlen(comm, TASK_COMM_LEN));
}

class SchedSource final : public Source {
 public:
  SchedSource(bool emit_sched, std::shared_ptr<SharedMap> wait_stacks)
      : emit_sched_(emit_sched), wait_stacks_(std::move(wait_stacks)) {}
  std::string_view name() const override { return emit_sched_ ? "scheduler" : "process events"; }
  const bpf_object* bpfObject() const override { return skel_ ? skel_->obj : nullptr; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    config_stacks_ = config.stacks ? config.sched_stacks : SchedStacks::kOff;
    skel_.reset(sched_bpf__open());
    if (!skel_) return libbpfError("scheduler: open BPF object", errno);
    skel_->rodata->sched_stacks = schedStackMode(config);
    if (Status s = prepareSkeleton(skel_.get(), filter, ringBytesFor(config, emit_sched_ ? 4 : 1));
        !s)
      return s.error().context("scheduler");
    chooseVariants();
    if (Status s = wait_stacks_->useIn(skel_->maps.wait_user_stacks); !s)
      return s.error().context("scheduler");
    if (int err = sched_bpf__load(skel_.get())) return libbpfError("scheduler: load", err);
    if (Status s = wait_stacks_->adoptFrom(skel_->maps.wait_user_stacks); !s)
      return s.error().context("scheduler");
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    if (!use_btf_) sink.addNote("scheduler: no kernel BTF, using raw tracepoints");
    if (emit_sched_)
      sink.addNote("scheduler: stacks " + schedStacksName(config_stacks_) +
                   " (--sched-stacks off|blocked|all)");
    if (int err = sched_bpf__attach(skel_.get()))
      return libbpfError("scheduler: attach tracepoints", err);
    drops_ = DropCounter(skel_->maps.drops);
    return poller.add(bpf_map__fd(skel_->maps.events), &SchedSource::onRecord, this);
  }

  void pollLost(EventSink& sink) override { drops_.poll(sink); }

 private:
  void chooseVariants() {
    use_btf_ = kernelHasBtf();
    auto& p = skel_->progs;
    bpf_program* switch_and_wakeup[2][3] = {
        {p.btf_sched_switch, p.btf_sched_waking, p.btf_sched_wakeup_new},
        {p.raw_sched_switch, p.raw_sched_waking, p.raw_sched_wakeup_new}};
    bpf_program* process_life[2][4] = {{p.btf_sched_process_fork, p.btf_sched_process_exec,
                                        p.btf_sched_process_exit, p.btf_task_rename},
                                       {p.raw_sched_process_fork, p.raw_sched_process_exec,
                                        p.raw_sched_process_exit, p.raw_task_rename}};
    for (int variant = 0; variant < 2; ++variant) {
      bool chosen = (variant == 0) == use_btf_;
      for (bpf_program* prog : switch_and_wakeup[variant])
        bpf_program__set_autoload(prog, chosen && emit_sched_);
      for (bpf_program* prog : process_life[variant]) bpf_program__set_autoload(prog, chosen);
    }
  }

  static bool framesFit(const event_stack& stack, size_t stack_offset, size_t size) {
    size_t frames = size_t{stack.kernel_count} + stack.user_count;
    return frames <= 2 * MAX_STACK_DEPTH &&
           stack_offset + offsetof(event_stack, frames) + frames * sizeof(uint64_t) <= size;
  }

  static int onRecord(void* context, void* data, size_t size) {
    auto* self = static_cast<SchedSource*>(context);
    if (size < sizeof(event_header)) return 0;
    switch (static_cast<const event_header*>(data)->type) {
      case EVENT_SCHED_SWITCH:
        self->onSwitch(data, size);
        break;
      case EVENT_WAKEUP:
        self->onWakeup(data, size);
        break;
      case EVENT_PROCESS:
        if (size >= sizeof(process_event))
          self->onProcess(*static_cast<const process_event*>(data));
        break;
      default:
        break;
    }
    return 0;
  }

  void onSwitch(const void* data, size_t size) {
    constexpr size_t kStackOffset = offsetof(sched_switch_event, stack);
    if (size < kStackOffset + offsetof(event_stack, frames)) return;
    const auto* e = static_cast<const sched_switch_event*>(data);
    if (!framesFit(e->stack, kStackOffset, size)) return;
    EventSink& sink = *sink_;
    const event_header& h = e->header;
    // The kernel captures prev's stack only when prev is a target; the other
    // side of a switch is often an unrelated task whose /proc we do not want.
    uint64_t stack = 0;
    if (h.pid != 0 && e->stack.kernel_count + e->stack.user_count > 0) {
      sink.processes().noteThread(h.pid, h.tid, h.time);
      stack = sink.internStack(h.pid, e->stack);
    }
    sink.append(format::SchedSwitch{.time = h.time,
                                    .cpu = h.cpu,
                                    .prev_pid = h.pid,
                                    .prev_tid = h.tid,
                                    .prev_state = e->prev_state,
                                    .next_pid = e->next_pid,
                                    .next_tid = e->next_tid,
                                    .stack_id = stack});
  }

  void onWakeup(const void* data, size_t size) {
    constexpr size_t kStackOffset = offsetof(wakeup_event, stack);
    if (size < kStackOffset + offsetof(event_stack, frames)) return;
    const auto* e = static_cast<const wakeup_event*>(data);
    if (!framesFit(e->stack, kStackOffset, size)) return;
    EventSink& sink = *sink_;
    const event_header& h = e->header;
    uint64_t stack = h.pid != 0 ? sink.internStack(h.pid, e->stack) : 0;
    sink.append(format::Wakeup{.time = h.time,
                               .cpu = h.cpu,
                               .target_cpu = e->target_cpu,
                               .waker_pid = h.pid,
                               .waker_tid = h.tid,
                               .wakee_pid = e->wakee_pid,
                               .wakee_tid = e->wakee_tid,
                               .stack_id = stack});
  }

  void onProcess(const process_event& e) {
    EventSink& sink = *sink_;
    ProcessTracker& processes = sink.processes();
    const event_header& h = e.header;
    format::ProcessEvent row{.time = h.time, .pid = h.pid, .tid = h.tid};
    switch (e.kind) {
      case PROCESS_FORK:
        row.event = static_cast<uint64_t>(format::ProcessEventType::kFork);
        row.peer_pid = e.peer_pid;
        row.peer_tid = e.peer_tid;
        processes.onFork(h.pid, e.peer_pid, e.peer_tid, h.time);
        break;
      case PROCESS_EXEC:
        row.event = static_cast<uint64_t>(format::ProcessEventType::kExec);
        processes.onExec(h.pid, h.time);
        break;
      case PROCESS_EXIT:
        row.event = static_cast<uint64_t>(format::ProcessEventType::kExit);
        row.peer_pid = e.is_process_exit ? e.peer_pid : 0;
        processes.onExit(h.pid, h.tid, e.is_process_exit != 0, h.time);
        break;
      case PROCESS_COMM:
        row.event = static_cast<uint64_t>(format::ProcessEventType::kComm);
        processes.onComm(h.pid, h.tid, commOf(e.comm), h.time);
        break;
      default:
        return;
    }
    sink.append(row);
  }

  bool emit_sched_;
  std::shared_ptr<SharedMap> wait_stacks_;
  SchedStacks config_stacks_ = SchedStacks::kBlocked;
  bool use_btf_ = true;
  SkeletonPtr<sched_bpf> skel_{nullptr, &sched_bpf__destroy};
  DropCounter drops_;
  EventSink* sink_ = nullptr;
};

}  // namespace

std::unique_ptr<Source> makeSchedSource(bool emit_sched, std::shared_ptr<SharedMap> wait_stacks) {
  return std::make_unique<SchedSource>(emit_sched, std::move(wait_stacks));
}

}  // namespace incise::recorder
