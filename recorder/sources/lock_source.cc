#include "recorder/sources/lock_source.h"

#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <map>
#include <tuple>
#include <vector>

#include "bpf/locks.h"
#include "locks.skel.h"
#include "objfile/elf_reader.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/libbpf_error.h"
#include "recorder/libbpf_options.h"
#include "recorder/probes/libc_locator.h"
#include "recorder/probes/lock_probe_spec.h"
#include "recorder/ring_poller.h"
#include "recorder/sources/skeleton_setup.h"
#include "recorder/sources/stack_event_size.h"
#include "recorder/target_filter.h"

namespace incise::recorder {
namespace {

using format::LockFlags;
using format::LockKind;

static_assert(LOCK_KIND_MUTEX == static_cast<int>(LockKind::kMutex));
static_assert(LOCK_KIND_RWLOCK_READ == static_cast<int>(LockKind::kRwlockRead));
static_assert(LOCK_KIND_RWLOCK_WRITE == static_cast<int>(LockKind::kRwlockWrite));
static_assert(LOCK_KIND_SPIN == static_cast<int>(LockKind::kSpin));
static_assert(LOCK_KIND_CUSTOM == static_cast<int>(LockKind::kCustom));
static_assert(LOCK_KIND_FUTEX == static_cast<int>(LockKind::kFutex));
static_assert(LOCK_KIND_CONDVAR == static_cast<int>(LockKind::kCondvar));
static_assert(LOCK_FLAG_CONTENDED == format::kLockContended);
static_assert(LOCK_FLAG_TRY_FAILED == format::kLockTryFailed);
static_assert(LOCK_FLAG_CONTENDED_ONLY == format::kLockContendedOnly);
static_assert(LOCK_FLAG_RECURSIVE == format::kLockRecursive);

constexpr std::string_view kName = "locks";
constexpr int kKernelENOTSUPP = 524;
// Critical sections still open are kept until their release arrives; past
// this many (threads x locks held at once) new ones are written unreleased.
constexpr size_t kMaxOpenSections = 1u << 16;

enum class Role { kAcquire, kTryAcquire, kRelease };

struct LockFunction {
  const char* symbol;
  Role role;
  uint32_t kind;  // for acquires
};

// The libc functions mode `all` probes, by family: a family whose functions
// cannot all be probed is left out as a whole, with a note in the trace.
// glibc 2.36's pthread_spin_lock starts with `lock decl` (f0 ff 0f), which
// x86 uprobes refuse (ENOTSUPP, 524); a uretprobe fails the same way, since
// it plants its breakpoint at the entry too. Probes at offsets inside the
// function do attach (checked through tracefs uprobe_events): +3 (the `jne`
// after each attempt) and +5 (`xor %eax,%eax`, reached once acquired), but
// they are not used yet, so spin locks are not recorded in any mode
// (`contended` cannot see them either: they never wait in the kernel).
// Callers inside libc, such as pthread_cond_wait re-taking its mutex, use
// internal entry points and are not seen.
struct LockFamily {
  const char* name;
  std::vector<LockFunction> functions;
};

const std::vector<LockFamily>& libcLockFamilies() {
  static const std::vector<LockFamily> families = {
      {"mutex",
       {{"pthread_mutex_lock", Role::kAcquire, LOCK_KIND_MUTEX},
        {"pthread_mutex_trylock", Role::kTryAcquire, LOCK_KIND_MUTEX},
        {"pthread_mutex_unlock", Role::kRelease, 0}}},
      {"rwlock",
       {{"pthread_rwlock_rdlock", Role::kAcquire, LOCK_KIND_RWLOCK_READ},
        {"pthread_rwlock_wrlock", Role::kAcquire, LOCK_KIND_RWLOCK_WRITE},
        {"pthread_rwlock_unlock", Role::kRelease, 0}}},
      {"spin",
       {{"pthread_spin_lock", Role::kAcquire, LOCK_KIND_SPIN},
        {"pthread_spin_unlock", Role::kRelease, 0}}},
  };
  return families;
}

// A binary to probe and the process it is probed in (-1: every process that
// maps it; the BPF side keeps only targets).
struct ProbedBinary {
  std::string path;
  int pid = -1;
};

class LockSource final : public Source {
 public:
  LockSource(std::shared_ptr<SharedMap> lock_calls, bool probe_libc)
      : lock_calls_(std::move(lock_calls)), probe_libc_(probe_libc) {}
  std::string_view name() const override { return kName; }
  const bpf_object* bpfObject() const override { return skel_ ? skel_->obj : nullptr; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    mode_ = config.lock_mode;
    skel_.reset(locks_bpf__open());
    if (!skel_) return libbpfError("locks: open", errno);
    if (Status s = prepareSkeleton(skel_.get(), filter,
                                   ringBytesFor(config, mode_ == LockMode::kAll ? 4 : 1));
        !s)
      return s.error().context("locks");

    // Resolve every probe before loading, so a bad --lock-probe fails early.
    for (const LockProbeSpec& spec : config.lock_probes) {
      Result<ResolvedLockProbe> probe = resolveLockProbe(spec);
      if (!probe) return probe.error();
      custom_probes_.push_back(*probe);
    }
    if (probe_libc_) {
      Result<std::vector<ProbedBinary>> libcs = libcBinaries(config);
      if (!libcs) return libcs.error();
      libcs_ = *libcs;
    }

    if (Status s = lock_calls_->useIn(skel_->maps.pending_calls); !s)
      return s.error().context("locks");
    if (int err = locks_bpf__load(skel_.get())) return libbpfError("locks: load", err);
    if (Status s = lock_calls_->adoptFrom(skel_->maps.pending_calls); !s)
      return s.error().context("locks");
    drops_ = DropCounter(skel_->maps.drops);
    pids_for_custom_probes_ = config.target_kind == TargetKind::kPids
                                  ? std::vector<int>(config.pids.begin(), config.pids.end())
                                  : std::vector<int>{-1};
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    for (const ProbedBinary& libc : libcs_) INCISE_RETURN_IF_ERROR(attachLibc(libc, sink));
    for (const ResolvedLockProbe& probe : custom_probes_) {
      for (int pid : pids_for_custom_probes_) {
        ProbedBinary binary{.path = probe.spec.binary, .pid = pid};
        INCISE_RETURN_IF_ERROR(attachAcquire(binary, probe.spec.acquire_symbol,
                                             probe.acquire_offset,
                                             LOCK_COOKIE(LOCK_KIND_CUSTOM, 0)));
        INCISE_RETURN_IF_ERROR(
            attachRelease(binary, probe.spec.release_symbol, probe.release_offset));
      }
    }
    return poller.add(bpf_map__fd(skel_->maps.events), &LockSource::onRecord, this);
  }

  void pollLost(EventSink& sink) override { drops_.poll(sink); }

  void finish(EventSink& sink) override {
    // Still held when recording stopped: the release was not seen.
    for (auto& [key, row] : open_sections_) sink.append(row);
    open_sections_.clear();
  }

 private:
  using SectionKey = std::tuple<uint32_t, uint32_t, uint64_t>;  // pid, tid, address

  Result<std::vector<ProbedBinary>> libcBinaries(const RecordConfig& config) const {
    std::vector<ProbedBinary> binaries;
    if (config.target_kind == TargetKind::kPids) {
      for (uint32_t pid : config.pids) {
        Result<std::string> path = libcOfProcess(pid);
        if (!path) return path.error().context("locks");
        binaries.push_back({.path = *path, .pid = static_cast<int>(pid)});
      }
      return binaries;
    }
    // -a, --cgroup, -- CMD: the system's libc (ours), in every process that
    // maps it; the BPF side keeps only the targets.
    Result<std::string> path = libcOfProcess(static_cast<uint32_t>(getpid()));
    if (!path) return path.error().context("locks: the system libc");
    binaries.push_back({.path = *path, .pid = -1});
    return binaries;
  }

  // Every family that can be probed; an Error only when none can.
  Status attachLibc(const ProbedBinary& libc, EventSink& sink) {
    Result<format::ObjectSymbols> object = objfile::readElfObject(libc.path);
    if (!object) return object.error().context("locks");
    std::string problems;
    size_t attached_families = 0;
    for (const LockFamily& family : libcLockFamilies()) {
      size_t links_before = links_.size();
      Status attached = attachFamily(*object, libc, family);
      if (attached) {
        ++attached_families;
        continue;
      }
      links_.resize(links_before);  // detach the part of the family that did attach
      sink.addNote(attached.message() + ": " + family.name + " locks are not recorded");
      problems += (problems.empty() ? "" : "; ") + attached.message();
    }
    if (attached_families == 0) return Error(problems);
    return Status::ok();
  }

  Status attachFamily(const format::ObjectSymbols& object, const ProbedBinary& libc,
                      const LockFamily& family) {
    for (const LockFunction& function : family.functions) {
      Result<uint64_t> offset = functionFileOffset(object, function.symbol, kName);
      if (!offset) return offset.error();
      if (function.role == Role::kRelease) {
        INCISE_RETURN_IF_ERROR(attachRelease(libc, function.symbol, *offset));
      } else {
        INCISE_RETURN_IF_ERROR(
            attachAcquire(libc, function.symbol, *offset,
                          LOCK_COOKIE(function.kind, function.role == Role::kTryAcquire)));
      }
    }
    return Status::ok();
  }

  Status attachAcquire(const ProbedBinary& binary, const std::string& symbol, uint64_t offset,
                       uint32_t cookie) {
    INCISE_RETURN_IF_ERROR(
        attachUprobe(skel_->progs.lock_enter, binary, symbol, offset, cookie, false));
    return attachUprobe(skel_->progs.lock_return, binary, symbol, offset, cookie, true);
  }

  Status attachRelease(const ProbedBinary& binary, const std::string& symbol, uint64_t offset) {
    return attachUprobe(skel_->progs.lock_release, binary, symbol, offset, 0, false);
  }

  Status attachUprobe(bpf_program* program, const ProbedBinary& binary, const std::string& symbol,
                      uint64_t offset, uint32_t cookie, bool retprobe) {
    auto opts = libbpfOptions<bpf_uprobe_opts>();
    opts.bpf_cookie = cookie;
    opts.retprobe = retprobe;
    bpf_link* link =
        bpf_program__attach_uprobe_opts(program, binary.pid, binary.path.c_str(), offset, &opts);
    if (!link) {
      int error = errno;
      std::string step = std::string("locks: attach ") + (retprobe ? "uretprobe " : "uprobe ") +
                         symbol + " in " + binary.path;
      // ENOTSUPP (kernel-internal 524, no strerror text): x86 uprobes refuse
      // some instructions, e.g. a lock-prefixed one, at the probed address.
      if (error == kKernelENOTSUPP)
        return Error(step + ": the kernel cannot uprobe the instruction there");
      return libbpfError(step, error);
    }
    links_.emplace_back(link);
    return Status::ok();
  }

  static int onRecord(void* context, void* data, size_t size) {
    static_cast<LockSource*>(context)->decode(data, size);
    return 0;
  }

  void decode(const void* data, size_t size) {
    if (size < sizeof(event_header)) return;
    const auto* header = static_cast<const event_header*>(data);
    if (header->type == EVENT_LOCK_RELEASE) {
      if (size >= sizeof(lock_release_event))
        onRelease(*static_cast<const lock_release_event*>(data));
    } else if (header->type == EVENT_LOCK) {
      const auto* e = static_cast<const lock_event*>(data);
      if (stackEventSize(*e, size) != 0) onAcquire(*e);
    }
  }

  void onAcquire(const lock_event& e) {
    sink_->processes().noteThread(e.header.pid, e.header.tid, e.header.time);
    format::LockInterval row{
        .time = e.request_ns,
        .acquired_time = e.header.time,
        .release_time = e.release_ns,
        .pid = e.header.pid,
        .tid = e.header.tid,
        .address = e.address,
        .lock_kind = e.kind,
        .flags = e.flags,
        .stack_id = sink_->internStack(e.header.pid, e.stack),
        .releaser_tid = e.releaser_tid,
        .holder_tid = e.holder_tid,
        .holder_state = e.holder_state,
    };
    if (e.holder_tid != 0) sink_->processes().noteThread(e.header.pid, e.holder_tid, e.header.time);
    if (e.expects_release && open_sections_.size() < kMaxOpenSections) {
      open_sections_[{e.header.pid, e.header.tid, e.address}] = row;
      return;
    }
    sink_->append(row);
  }

  void onRelease(const lock_release_event& e) {
    auto it = open_sections_.find({e.header.pid, e.header.tid, e.address});
    if (it == open_sections_.end()) return;  // its acquire was dropped (counted) or not tracked
    format::LockInterval row = it->second;
    open_sections_.erase(it);
    row.release_time = e.header.time;
    row.flags |= e.flags;
    sink_->append(row);
  }

  LockMode mode_ = LockMode::kContended;
  std::shared_ptr<SharedMap> lock_calls_;
  bool probe_libc_;
  SkeletonPtr<locks_bpf> skel_{nullptr, &locks_bpf__destroy};
  std::vector<LinkPtr> links_;
  std::vector<ResolvedLockProbe> custom_probes_;
  std::vector<ProbedBinary> libcs_;
  std::vector<int> pids_for_custom_probes_;
  DropCounter drops_;
  EventSink* sink_ = nullptr;
  std::map<SectionKey, format::LockInterval> open_sections_;
};

}  // namespace

std::unique_ptr<Source> makeLockSource(std::shared_ptr<SharedMap> lock_calls, bool probe_libc) {
  return std::make_unique<LockSource>(std::move(lock_calls), probe_libc);
}

}  // namespace incise::recorder
