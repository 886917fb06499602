// Scheduler and process-life source: see sched_source.h.
#include "recorder/sources/sched_source.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>

#include "base/unique_fd.h"
#include "bpf/futex_wait.h"
#include "bpf/kernel_blocks.h"
#include "bpf/wait_stack.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/metadata/proc_threads.h"
#include "recorder/per_cpu_sums.h"
#include "recorder/ring_poller.h"
#include "recorder/sources/futex_wait_rows.h"
#include "recorder/sources/goroutine_ids.h"
#include "recorder/sources/kernel_block_rows.h"
#include "recorder/sources/short_blocks.h"
#include "recorder/sources/short_waits.h"
#include "recorder/sources/skeleton_setup.h"
#include "sched.skel.h"

namespace incise::recorder {

namespace {

using format::HolderState;
using format::WaitObject;

static_assert(WAIT_OBJECT_UNKNOWN == static_cast<int>(WaitObject::kUnknown));
static_assert(WAIT_OBJECT_MUTEX == static_cast<int>(WaitObject::kMutex));
static_assert(WAIT_OBJECT_RWLOCK_READERS == static_cast<int>(WaitObject::kRwlockReaders));
static_assert(WAIT_OBJECT_RWLOCK_WRITE_PHASE == static_cast<int>(WaitObject::kRwlockWritePhase));
static_assert(WAIT_OBJECT_RWLOCK_WRITERS == static_cast<int>(WaitObject::kRwlockWriters));
static_assert(WAIT_OBJECT_CONDVAR_GROUP0 == static_cast<int>(WaitObject::kCondvarGroup0));
static_assert(WAIT_OBJECT_CONDVAR_GROUP1 == static_cast<int>(WaitObject::kCondvarGroup1));
static_assert(WAIT_OBJECT_SEMAPHORE == static_cast<int>(WaitObject::kSemaphore));
static_assert(WAIT_OBJECT_THREAD == static_cast<int>(WaitObject::kThread));
static_assert(WAIT_OBJECT_PI_MUTEX == static_cast<int>(WaitObject::kPiMutex));
static_assert(WAIT_OBJECT_INTERNAL_LOCK == static_cast<int>(WaitObject::kInternalLock));
static_assert(HOLDER_UNKNOWN == static_cast<int>(HolderState::kUnknown));
static_assert(HOLDER_RUNNING == static_cast<int>(HolderState::kRunning));
static_assert(HOLDER_RUNNABLE == static_cast<int>(HolderState::kRunnable));
static_assert(HOLDER_SLEEPING == static_cast<int>(HolderState::kSleeping));
static_assert(HOLDER_DISK_SLEEP == static_cast<int>(HolderState::kDiskSleep));
static_assert(HOLDER_OTHER == static_cast<int>(HolderState::kOther));
// The blocking-switch record is a switch record with the facts before its stack.
static_assert(offsetof(futex_switch_event, next_goid) == offsetof(sched_switch_event, next_goid));

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

// Pages of bpf/thread_states.bpf.h for every thread id the kernel gives
// out (/proc/sys/kernel/pid_max; its default, 32768, when unreadable).
uint32_t threadStatePages() {
  uint64_t pid_max = 32768;
  if (std::FILE* file = std::fopen("/proc/sys/kernel/pid_max", "re")) {
    unsigned long long value = 0;
    if (std::fscanf(file, "%llu", &value) == 1 && value > 0) pid_max = value;
    std::fclose(file);
  }
  constexpr uint64_t kPidMaxLimit = 4 * 1024 * 1024;  // the kernel's PID_MAX_LIMIT
  pid_max = std::min(pid_max, kPidMaxLimit);
  return static_cast<uint32_t>((pid_max + THREAD_STATE_PAGE - 1) / THREAD_STATE_PAGE);
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
  SchedSource(bool emit_sched, std::shared_ptr<SharedMap> lock_calls)
      : emit_sched_(emit_sched),
        lock_calls_(std::move(lock_calls)),
        waits_([this](uint32_t pid, uint32_t tid) {
          if (!proc_threads_.isThreadOf(pid, tid)) return false;
          sink_->processes().noteThread(pid, tid, monotonicNowNs());
          return true;
        }) {}
  std::string_view name() const override {
    if (emit_sched_) return "scheduler";
    return futex_waits_ ? "futex waits" : "process events";
  }
  const bpf_object* bpfObject() const override { return skel_ ? skel_->obj : nullptr; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    config_stacks_ = config.stacks ? config.sched_stacks : SchedStacks::kOff;
    targets_can_move_ = config.target_kind == TargetKind::kCgroup;
    futex_waits_ = config.lock_mode != LockMode::kOff;
    skel_.reset(sched_bpf__open());
    if (!skel_) return libbpfError("scheduler: open BPF object", errno);
    skel_->rodata->sched_stacks = schedStackMode(config);
    skel_->rodata->emit_sched_rows = emit_sched_;
    skel_->rodata->futex_waits = futex_waits_;
    const bool lock_calls_probed =
        config.lock_mode == LockMode::kAll || !config.lock_probes.empty();
    if (emit_sched_ && config.sched_min_block_ns > 0)
      skel_->rodata->min_block_ns = config.sched_min_block_ns;
    skel_->rodata->lock_calls_probed = lock_calls_probed;
    // Short waits with no holder are counted, not written, in contended mode
    // only: probed lock calls join the waits inside them, and a wait's context
    // (--context) is read at its row.
    if (futex_waits_ && !lock_calls_probed && config.sched_min_block_ns > 0 &&
        config.contexts.empty()) {
      short_waits_.emplace(config.sched_min_block_ns);
      min_wait_us_ = config.sched_min_block_ns / 1000;
    }
    // Where a Go layout cannot be read, the cpu samples source notes it.
    if (emit_sched_ || futex_waits_) goroutines_ = findGoroutineIds(config, filter.pids());
    follow_go_execs_ = (emit_sched_ || futex_waits_) && goProgramsMayStart(config);
    skel_->rodata->go_targets = !goroutines_.processes.empty() || follow_go_execs_;
    use_btf_ = kernelHasBtf();
    if (emit_sched_ && config.sched_min_block_ns > 0) {
      // A lock holder is known from futex waits only where every lock wait is
      // one: not with lock calls probed, nor in Go programs (a goroutine
      // waiting for a sync.Mutex parks, its thread runs on).
      bool waits_tell_holders = !lock_calls_probed && !skel_->rodata->go_targets;
      min_block_us_ = config.sched_min_block_ns / 1000;
      preemptions_written_ = !waits_tell_holders;
      // With BTF-enabled tracepoints the program decides short blocks itself
      // (bpf/kernel_blocks.bpf.h): their records never cross the ring.
      kernel_decides_blocks_ = use_btf_;
      skel_->rodata->kernel_decides_blocks = kernel_decides_blocks_;
      skel_->rodata->preemptions_written = preemptions_written_;
      if (!kernel_decides_blocks_)
        short_blocks_.emplace(config.sched_min_block_ns,
                              waits_tell_holders ? ShortBlocks::Preemptions::kSummarisedOutsideWaits
                                                 : ShortBlocks::Preemptions::kWritten);
    }
    // A byte per thread id up to pid_max, for lock holders' states
    // (bpf/thread_states.bpf.h); a page without lock waits recorded.
    if (int err = bpf_map__set_max_entries(skel_->maps.thread_states,
                                           futex_waits_ ? threadStatePages() : 1))
      return libbpfError("scheduler: size the thread states", err);
    if (!skel_->rodata->go_targets) {
      if (int err = bpf_map__set_max_entries(skel_->maps.go_thread_goids, 1))
        return libbpfError("scheduler: size the goroutine map", err);
    }
    if (Status s = prepareSkeleton(skel_.get(), filter, ringBytesFor(config, emit_sched_ ? 4 : 1));
        !s)
      return s.error().context("scheduler");
    chooseVariants();
    if (Status s = lock_calls_->useIn(skel_->maps.pending_calls); !s)
      return s.error().context("scheduler");
    if (int err = sched_bpf__load(skel_.get())) return libbpfError("scheduler: load", err);
    if (Status s = goroutines_.fill(bpf_map__fd(skel_->maps.go_processes)); !s)
      return s.error().context("scheduler");
    if (Status s = lock_calls_->adoptFrom(skel_->maps.pending_calls); !s)
      return s.error().context("scheduler");
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    poller_ = &poller;
    if (follow_go_execs_) followGoPrograms(sink.processes(), bpf_map__fd(skel_->maps.go_processes));
    if (!use_btf_) sink.addNote("scheduler: no kernel BTF, using raw tracepoints");
    if (emit_sched_)
      sink.addNote("scheduler: stacks " + schedStacksName(config_stacks_) +
                   " (--sched-stacks off|blocked|all)");
    if (int err = sched_bpf__attach(skel_.get()))
      return libbpfError("scheduler: attach tracepoints", err);
    drops_ = DropCounter(skel_->maps.drops);
    return poller.add(bpf_map__fd(skel_->maps.events), &SchedSource::onRecord, this);
  }

  void pollLost(EventSink& sink) override {
    drops_.poll(sink);
    // A task can move into or out of the target cgroup: each task's
    // remembered answer is asked again (bpf/target_cache.bpf.h).
    if (targets_can_move_) skel_->data->target_generation += 1;
  }

  void finish(EventSink& sink) override {
    if (kernel_decides_blocks_) sweepKernelBlocks(sink);
    // Threads still blocked in a wait: their rows end with the recording.
    for (const format::LockInterval& row : waits_.finish(monotonicNowNs())) sink.append(row);
    if (short_waits_) {
      short_waits_->finish();
      writeWaitSummaries();
      sink.addNote(shortWaitsNote());
    }
    if (short_blocks_) {
      short_blocks_->finish();
      writeReady();
      sink.addNote(shortBlocksNote());
    }
    if (kernel_decides_blocks_)
      sink.addNote(KernelBlockRows::note(
          sumPerCpuSlots(bpf_map__fd(skel_->maps.kernel_block_counts), KERNEL_BLOCK_COUNTS),
          min_block_us_));
    if (emit_sched_ && config_stacks_ != SchedStacks::kOff)
      for (const std::string& note : waitStacksNotes()) sink.addNote(note);
  }

 private:
  // Blocks still open and the tallies not yet sent: the program's tracepoints
  // are detached first, so nothing else touches the threads' storage while
  // the sweep reads it, then its records are taken from the ring.
  void sweepKernelBlocks(EventSink& sink) {
    auto& l = skel_->links;
    for (bpf_link** link : {&l.btf_sched_switch, &l.btf_sched_waking, &l.btf_sched_wakeup_new,
                            &l.btf_sched_process_fork, &l.btf_sched_process_exec,
                            &l.btf_sched_process_exit, &l.btf_task_rename}) {
      bpf_link__destroy(*link);
      *link = nullptr;
    }
    if (!l.sweep_blocks) {
      sink.addNote("scheduler: blocks still open at the end were not written (no sweep link)");
      return;
    }
    UniqueFd iter(bpf_iter_create(bpf_link__fd(l.sweep_blocks)));
    if (!iter) {
      sink.addNote(std::string("scheduler: blocks still open at the end were not written: ") +
                   std::strerror(errno));
      return;
    }
    char buffer[64];
    while (::read(iter.get(), buffer, sizeof buffer) > 0) {
    }
    (void)poller_->drain();
  }

  void chooseVariants() {
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
        bpf_program__set_autoload(prog, chosen && (emit_sched_ || futex_waits_));
      for (bpf_program* prog : process_life[variant]) bpf_program__set_autoload(prog, chosen);
    }
    bpf_program__set_autoload(p.sweep_blocks, kernel_decides_blocks_);
  }

  // Rows the short-block filter has decided to keep, in arrival order.
  void writeReady() {
    for (const ShortBlocks::Row& row : short_blocks_->takeReady())
      std::visit([this](const auto& r) { sink_->append(r); }, row);
    for (const format::BlockSummary& row : short_blocks_->takeSummaries()) sink_->append(row);
  }

  void appendWait(const format::LockInterval& row) {
    if (!short_waits_) {
      sink_->append(row);
      return;
    }
    if (!short_waits_->add(row)) sink_->append(row);
    writeWaitSummaries();
  }

  void writeWaitSummaries() {
    for (const format::WaitSummary& row : short_waits_->takeSummaries()) sink_->append(row);
  }

  std::string shortWaitsNote() const {
    const ShortWaits::Counts& c = short_waits_->counts();
    char text[400];
    std::snprintf(text, sizeof text,
                  "futex waits: %llu condvar and semaphore waits shorter than %llu us not written "
                  "(%.3f ms in all; --sched-min-block), counted in %llu wait summary rows (%llu "
                  "written early at the table's bound)",
                  static_cast<unsigned long long>(c.waits),
                  static_cast<unsigned long long>(min_wait_us_), c.wait_ns / 1e6,
                  static_cast<unsigned long long>(c.summaries),
                  static_cast<unsigned long long>(c.summary_full_flushes));
    return text;
  }

  std::string shortBlocksNote() const {
    const ShortBlocks::Counts& c = short_blocks_->counts();
    char text[768];
    std::snprintf(text, sizeof text,
                  "scheduler: %llu off-CPU intervals shorter than %llu us not written (%.3f ms "
                  "off-CPU in all; %llu switch and %llu wake-up rows not written, and %llu switch "
                  "rows written with one half elided; --sched-min-block), "
                  "counted in %llu block summary rows (%llu written early at the table's bound); "
                  "%llu short preemptions written%s, %llu summarised",
                  static_cast<unsigned long long>(c.short_blocks),
                  static_cast<unsigned long long>(min_block_us_), c.short_block_ns / 1e6,
                  static_cast<unsigned long long>(c.switches_dropped),
                  static_cast<unsigned long long>(c.wakeups_dropped),
                  static_cast<unsigned long long>(c.switches_half_elided),
                  static_cast<unsigned long long>(c.summaries),
                  static_cast<unsigned long long>(c.summary_full_flushes),
                  static_cast<unsigned long long>(c.short_preemptions_kept),
                  preemptions_written_
                      ? " (every preemption is: lock calls probed, or Go)"
                      : " (a futex wait on a lock overlapped them, or a thread's first switch-out)",
                  static_cast<unsigned long long>(c.short_preemptions_summarised));
    return text;
  }

  // How the switch-out and waker user stacks and the switch-out kernel
  // stacks were had (bpf/wait_stack.bpf.h, bpf/kernel_wait_stack.bpf.h).
  std::vector<std::string> waitStacksNotes() const {
    const std::vector<uint64_t> total =
        sumPerCpuSlots(bpf_map__fd(skel_->maps.wait_stack_counts), WAIT_STACK_COUNTS);
    auto note = [&](const char* what, const char* not_kept, int first) {
      char text[320];
      std::snprintf(text, sizeof text,
                    "scheduler: %llu %s reused from an earlier walk at the same place, %llu "
                    "walked and kept, %llu %s",
                    static_cast<unsigned long long>(total[first]), what,
                    static_cast<unsigned long long>(total[first + 1]),
                    static_cast<unsigned long long>(total[first + 2]), not_kept);
      return std::string(text);
    };
    return {note("user stacks", "walked by frame pointers or not kept", WAIT_STACK_REUSED),
            note("kernel stacks of blocks", "walked and not kept", KERNEL_STACK_REUSED)};
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
      case EVENT_FUTEX_SWITCH:
        self->onFutexSwitch(data, size);
        break;
      case EVENT_WAKEUP:
        self->onWakeup(data, size);
        break;
      case EVENT_DECIDED_SWITCH:
        self->onDecidedSwitch(data, size);
        break;
      case EVENT_BLOCK_TALLY:
        if (size >= sizeof(block_tally_event))
          self->sink_->append(
              self->kernel_blocks_.summaryOf(*static_cast<const block_tally_event*>(data)));
        break;
      case EVENT_TALLY_STACK:
        self->onTallyStack(data, size);
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

  // The switch row, and the end of the wait of `next` if it was in one.
  // Returns prev's interned stack (0 = none).
  uint64_t appendSwitch(const sched_switch_event& e, const event_stack& stack) {
    EventSink& sink = *sink_;
    const event_header& h = e.header;
    // The kernel captures prev's stack only when prev is a target; the other
    // side of a switch is often an unrelated task whose /proc we do not want.
    uint64_t stack_id = internStack(h.pid, h.tid, h.time, stack);
    if (emit_sched_) {
      format::SchedSwitch row{.time = h.time,
                              .cpu = h.cpu,
                              .prev_pid = h.pid,
                              .prev_tid = h.tid,
                              .prev_state = e.prev_state,
                              .next_pid = e.next_pid,
                              .next_tid = e.next_tid,
                              .stack_id = stack_id,
                              .goid = e.prev_goid,
                              .next_goid = e.next_goid};
      if (short_blocks_) {
        short_blocks_->onSwitch(
            row, (e.target_flags & SWITCH_PREV_TARGET) != 0,
            (e.target_flags & SWITCH_NEXT_TARGET) != 0,
            {.in_progress = waits_.holderWaitsInProgress(), .begun = holder_waits_begun_});
        writeReady();
      } else {
        sink.append(row);
      }
    }
    if (futex_waits_) {
      if (std::optional<format::LockInterval> row = waits_.onSwitchIn(e.next_tid, h.time))
        appendWait(*row);
    }
    return stack_id;
  }

  // prev's off-CPU stack, interned (0 = none). The kernel captures it only
  // when prev is a target; the other side of a switch is often an unrelated
  // task whose /proc we do not want.
  uint64_t internStack(uint32_t pid, uint32_t tid, uint64_t time, const event_stack& stack) {
    if (pid == 0 || stack.kernel_count + stack.user_count == 0) return 0;
    sink_->processes().noteThread(pid, tid, time);
    return sink_->internStack(pid, stack);
  }

  // A switch row the kernel decided (bpf/kernel_blocks.h), or only the end
  // of next's futex wait.
  void onDecidedSwitch(const void* data, size_t size) {
    constexpr size_t kStackOffset = offsetof(decided_switch_event, stack);
    if (size < kStackOffset + offsetof(event_stack, frames)) return;
    const auto* e = static_cast<const decided_switch_event*>(data);
    if (!framesFit(e->stack, kStackOffset, size)) return;
    const event_header& h = e->header;
    uint64_t stack_id = internStack(h.pid, h.tid, h.time, e->stack);
    if (std::optional<format::SchedSwitch> row = KernelBlockRows::switchRow(*e, stack_id))
      sink_->append(*row);
    if (futex_waits_ && (e->flags & DECIDED_NEXT_ENDS_WAIT) != 0) {
      if (std::optional<format::LockInterval> row = waits_.onSwitchIn(e->next_tid, h.time))
        appendWait(*row);
    }
  }

  void onTallyStack(const void* data, size_t size) {
    constexpr size_t kStackOffset = offsetof(tally_stack_event, stack);
    if (size < kStackOffset + offsetof(event_stack, frames)) return;
    const auto* e = static_cast<const tally_stack_event*>(data);
    if (!framesFit(e->stack, kStackOffset, size)) return;
    const event_header& h = e->header;
    kernel_blocks_.onTallyStack(h.tid, e->stack_hash, internStack(h.pid, h.tid, h.time, e->stack));
  }

  void onSwitch(const void* data, size_t size) {
    constexpr size_t kStackOffset = offsetof(sched_switch_event, stack);
    if (size < kStackOffset + offsetof(event_stack, frames)) return;
    const auto* e = static_cast<const sched_switch_event*>(data);
    if (!framesFit(e->stack, kStackOffset, size)) return;
    appendSwitch(*e, e->stack);
  }

  // A switch where prev blocks in a futex wait: the switch, and the wait's start.
  void onFutexSwitch(const void* data, size_t size) {
    constexpr size_t kStackOffset = offsetof(futex_switch_event, stack);
    if (size < kStackOffset + offsetof(event_stack, frames)) return;
    const auto* e = static_cast<const futex_switch_event*>(data);
    if (!framesFit(e->stack, kStackOffset, size)) return;
    const event_header& h = e->header;
    uint64_t stack_id = 0;
    if (e->target_flags & SWITCH_NOT_A_ROW) {
      // The kernel decided the switch's rows (onDecidedSwitch): the wait alone.
      stack_id = internStack(h.pid, h.tid, h.time, e->stack);
    } else {
      sched_switch_event as_switch{};
      std::memcpy(&as_switch, e, offsetof(sched_switch_event, stack));
      stack_id = appendSwitch(as_switch, e->stack);
    }
    if (!futex_waits_) return;
    const futex_wait_facts& f = e->futex;
    if (format::waitObjectMayHaveHolder(f.object)) ++holder_waits_begun_;
    waits_.onBlock(
        {.time = h.time,
         .pid = h.pid,
         .tid = h.tid,
         .address = f.uaddr,
         .op = f.op,
         .value = f.value,
         .object = f.object,
         .holder_tid = f.holder_tid,
         .holder_state = f.holder_state <= HOLDER_OTHER ? f.holder_state : uint32_t{HOLDER_UNKNOWN},
         .stack_id = stack_id,
         .goid = e->prev_goid});
  }

  void onWakeup(const void* data, size_t size) {
    constexpr size_t kStackOffset = offsetof(wakeup_event, stack);
    if (size < kStackOffset + offsetof(event_stack, frames)) return;
    const auto* e = static_cast<const wakeup_event*>(data);
    if (!framesFit(e->stack, kStackOffset, size)) return;
    EventSink& sink = *sink_;
    const event_header& h = e->header;
    uint64_t stack = h.pid != 0 ? sink.internStack(h.pid, e->stack) : 0;
    if (emit_sched_ && (e->target_flags & WAKEUP_NOT_A_ROW) == 0) {
      format::Wakeup row{.time = h.time,
                         .cpu = h.cpu,
                         .target_cpu = e->target_cpu,
                         .waker_pid = h.pid,
                         .waker_tid = h.tid,
                         .wakee_pid = e->wakee_pid,
                         .wakee_tid = e->wakee_tid,
                         .stack_id = stack};
      if (short_blocks_) {
        short_blocks_->onWakeup(row, (e->target_flags & WAKEE_TARGET) != 0);
        writeReady();
      } else {
        sink.append(row);
      }
    }
    if (futex_waits_) {
      waits_.onWake({.time = h.time,
                     .waker_pid = h.pid,
                     .waker_tid = h.tid,
                     .wakee_tid = e->wakee_tid,
                     .releases = (e->waker_flags & (WAKER_IN_FUTEX_WAKE | WAKER_EXITING)) != 0,
                     .stack_id = stack});
    }
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
        kernel_blocks_.onNewThread(e.peer_tid);
        break;
      case PROCESS_EXEC:
        row.event = static_cast<uint64_t>(format::ProcessEventType::kExec);
        processes.onExec(h.pid, h.time);
        break;
      case PROCESS_EXIT:
        row.event = static_cast<uint64_t>(format::ProcessEventType::kExit);
        row.peer_pid = e.is_process_exit ? e.peer_pid : 0;
        processes.onExit(h.pid, h.tid, e.is_process_exit != 0, h.time);
        waits_.onThreadExit(h.tid);
        proc_threads_.forget(h.tid);
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
  bool futex_waits_ = false;
  std::shared_ptr<SharedMap> lock_calls_;
  ProcThreads proc_threads_;
  FutexWaitRows waits_;
  // For ShortBlocks: a wait on a lock begun during a short preemption.
  uint64_t holder_waits_begun_ = 0;
  SchedStacks config_stacks_ = SchedStacks::kBlocked;
  // --sched-min-block: holds back and drops short blocks' rows (unset at 0).
  std::optional<ShortBlocks> short_blocks_;
  // --sched-min-block: counts short waits with no holder (unset at 0, or with --context).
  std::optional<ShortWaits> short_waits_;
  uint64_t min_wait_us_ = 0;
  GoroutineIds goroutines_;       // Go targets: where their threads keep the goroutine
  bool follow_go_execs_ = false;  // Go programs started later get ids too
  uint64_t min_block_us_ = 0;
  bool preemptions_written_ =
      false;  // every short preemption is written (ShortBlocks::Preemptions)
  bool use_btf_ = true;
  bool targets_can_move_ = false;  // --cgroup: tasks move between cgroups
  // The program decides short blocks (bpf/kernel_blocks.bpf.h) instead of short_blocks_.
  bool kernel_decides_blocks_ = false;
  KernelBlockRows kernel_blocks_;
  RingPoller* poller_ = nullptr;
  SkeletonPtr<sched_bpf> skel_{nullptr, &sched_bpf__destroy};
  DropCounter drops_;
  EventSink* sink_ = nullptr;
};

}  // namespace

std::unique_ptr<Source> makeSchedSource(bool emit_sched, std::shared_ptr<SharedMap> lock_calls) {
  return std::make_unique<SchedSource>(emit_sched, std::move(lock_calls));
}

}  // namespace incise::recorder
