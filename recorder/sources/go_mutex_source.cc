#include "recorder/sources/go_mutex_source.h"

#include <bpf/libbpf.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <limits>
#include <set>
#include <utility>

#include "base/file_identity.h"
#include "bpf/go_mutex.h"
#include "bpf/locks.h"
#include "go_mutex.skel.h"
#include "objfile/elf_reader.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/libbpf_error.h"
#include "recorder/libbpf_options.h"
#include "recorder/probes/go_goid_offset.h"
#include "recorder/probes/go_mutex_probes.h"
#include "recorder/probes/go_target_executables.h"
#include "recorder/probes/go_wait_probes.h"
#include "recorder/ring_poller.h"
#include "recorder/sources/goroutine_ids.h"
#include "recorder/sources/skeleton_setup.h"
#include "recorder/sources/stack_event_size.h"
#include "recorder/target_filter.h"
#include "recorder/uprobe_attacher.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "go mutex";
// Go executables first run during a recording that get probes, and the
// probes they may hold in all: each probe is a link (a descriptor) kept
// until the recording ends.
constexpr size_t kMaxFollowedExecutables = 64;
constexpr size_t kMaxFollowedProbes = 512;
// Distinct executables remembered as looked at; later ones are not.
constexpr size_t kMaxSeenExecutables = 65536;

// What /proc/PID/exe names (for notes), or that link itself.
std::string executableName(const std::string& exe_link) {
  char name[PATH_MAX];
  ssize_t length = readlink(exe_link.c_str(), name, sizeof name - 1);
  return length > 0 ? std::string(name, static_cast<size_t>(length)) : exe_link;
}

class GoMutexSource final : public Source {
 public:
  explicit GoMutexSource(UprobeAttacher* attacher) : attacher_(attacher) {}
  std::string_view name() const override { return kName; }
  const bpf_object* bpfObject() const override { return skel_ ? skel_->obj : nullptr; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    for (const TargetExecutable& target : targetExecutables(config)) {
      if (probes_.size() == MAX_GO_WAIT_SITES) {
        notes_.push_back("go mutex: more than " + std::to_string(MAX_GO_WAIT_SITES) +
                         " Go executables: the others' waits are not recorded");
        break;
      }
      if (std::optional<FileIdentity> key = fileIdentity(target.path)) seen_.insert(*key);
      Result<std::optional<go_process>> layout = goThreadLayout(target.path);
      if (!layout && targetExited(target)) {
        exited_unread_ += target.pids.size();
        continue;
      }
      if (std::optional<Probed> probed = probe(target, layout))
        probes_.push_back(std::move(*probed));
    }
    // Under -a and --cgroup a Go program may start later: its probes attach
    // to programs loaded now.
    if (probes_.empty() && !attacher_) return Status::ok();  // nothing to load

    skel_.reset(go_mutex_bpf__open());
    if (!skel_) return libbpfError("go mutex: open", errno);
    if (Status s = prepareSkeleton(skel_.get(), filter, ringBytesFor(config, 1)); !s)
      return s.error().context("go mutex");
    if (int err = go_mutex_bpf__load(skel_.get())) return libbpfError("go mutex: load", err);
    for (uint32_t index = 0; index < probes_.size(); ++index) {
      if (bpf_map__update_elem(skel_->maps.go_sites, &index, sizeof(index), &probes_[index].site,
                               sizeof(go_wait_site), BPF_ANY) != 0)
        return libbpfError("go mutex: fill go_sites", errno);
    }
    drops_ = DropCounter(skel_->maps.drops);
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    for (const std::string& note : notes_) sink.addNote(note);
    notes_.clear();
    if (!skel_) return Status::ok();
    for (uint32_t index = 0; index < probes_.size(); ++index) {
      const Probed& probed = probes_[index];
      INCISE_RETURN_IF_ERROR(attachProbes(
          probed, index,
          [&](bpf_program* program, uint64_t cookie, uint64_t offset, const std::string& what) {
            return attachAt(program, probed, cookie, offset, what);
          }));
    }
    if (attacher_) {
      INCISE_RETURN_IF_ERROR(handProgramsToAttacher());
      sink.processes().addExecListener([this](uint32_t pid) { onExec(pid); });
    }
    return poller.add(bpf_map__fd(skel_->maps.events), &GoMutexSource::onRecord, this);
  }

  void finish(EventSink& sink) override {
    if (exited_unread_ > 0)
      sink.addNote("go mutex: " + std::to_string(exited_unread_) +
                   " processes exited before their executables were read (a Go program " +
                   "among them got no probes)");
    if (unprobed_ > 0)
      sink.addNote("go mutex: " + std::to_string(unprobed_) + " Go executables first run " +
                   "during the recording, past the first " +
                   std::to_string(kMaxFollowedExecutables) + " or " +
                   std::to_string(kMaxFollowedProbes) +
                   " probes, got no probes: their waits are not recorded");
    if (unseen_ > 0)
      sink.addNote("go mutex: " + std::to_string(unseen_) + " execs of executables past the " +
                   "first " + std::to_string(kMaxSeenExecutables) +
                   " distinct ones were not looked at: a Go program among them got no probes");
  }

  void pollLost(EventSink& sink) override {
    if (skel_) drops_.poll(sink);
  }

 private:
  struct Probed {
    std::string binary;
    int pid = -1;
    std::optional<GoMutexProbes> mutex;
    std::optional<GoWaitProbes> waits;
    go_wait_site site{};  // its entry in go_sites; goid_offset is the mutex probes' cookie
  };

  // The probes of one target executable whose layout (goThreadLayout) is
  // `layout`, or nullopt (a note says why when it is a Go program that
  // cannot be probed; processes that exited meanwhile are only counted).
  std::optional<Probed> probe(const TargetExecutable& target,
                              const Result<std::optional<go_process>>& layout) {
    if (layout && !*layout) return std::nullopt;  // not a Go program
    Result<format::ObjectSymbols> object = objfile::readElfObject(target.path);
    if (!object && targetExited(target)) {
      exited_unread_ += target.pids.size();
      return std::nullopt;
    }
    if (!object) {
      notes_.push_back("go mutex: " + object.error().message() + ": Go waits are not recorded");
      return std::nullopt;
    }
    Probed probed{.binary = target.path, .pid = target.pid};
    Result<std::optional<GoMutexProbes>> mutex = findGoMutexProbes(target.path, *object);
    if (mutex) {
      probed.mutex = std::move(*mutex);
    } else {
      notes_.push_back(mutex.error().message() + ": Go mutex waits are not recorded");
    }
    Result<std::optional<GoWaitProbes>> waits = findGoWaitProbes(target.path, *object);
    if (waits) {
      probed.waits = std::move(*waits);
    } else {
      notes_.push_back(waits.error().message() + ": Go RWMutex and Cond waits are not recorded");
    }
    if (!probed.mutex && !probed.waits) return std::nullopt;

    if (!layout) notes_.push_back(layout.error().message() + ": Go waits carry no goroutine ids");
    probed.site.goid_offset = layout ? (*layout)->goid_offset : GO_NO_GOID;
    if (probed.waits && !placeObjects(probed)) probed.waits.reset();
    if (!probed.mutex && !probed.waits) return std::nullopt;
    return probed;
  }

  // The offsets that turn a semaphore or notify list into its RWMutex or
  // Cond; false (with a note) when the binary's DWARF does not give them.
  bool placeObjects(Probed& probed) {
    Result<GoSyncOffsets> offsets = goSyncOffsets(probed.binary);
    bool rwmutex = false, cond = false;
    for (const GoWaitFunction& wait : probed.waits->waits) {
      (wait.role == GO_WAIT_COND ? cond : rwmutex) = true;
    }
    if (!offsets || (rwmutex && (!offsets->rw_reader_sem || !offsets->rw_writer_sem)) ||
        (cond && !offsets->cond_notify)) {
      notes_.push_back("go waits: no sync.RWMutex or sync.Cond layout in the DWARF of " +
                       probed.binary + ": Go RWMutex and Cond waits are not recorded");
      return false;
    }
    probed.site.read_offset = static_cast<uint32_t>(offsets->rw_reader_sem.value_or(0));
    probed.site.write_offset = static_cast<uint32_t>(offsets->rw_writer_sem.value_or(0));
    probed.site.cond_offset = static_cast<uint32_t>(offsets->cond_notify.value_or(0));
    probed.site.writer_caller = probed.waits->writer_caller;
    probed.site.writer_caller_size = probed.waits->writer_caller_size;
    return true;
  }

  using AttachOne = std::function<Status(bpf_program* program, uint64_t cookie, uint64_t offset,
                                         const std::string& what)>;

  // Every probe of the binary at `index` in go_sites, through `attach_one`.
  Status attachProbes(const Probed& probed, uint32_t index, const AttachOne& attach_one) {
    if (probed.mutex) {
      const GoMutexProbes& mutex = *probed.mutex;
      const uint64_t goid = probed.site.goid_offset;
      INCISE_RETURN_IF_ERROR(
          attach_one(skel_->progs.go_lock_slow, goid, mutex.lock_slow, kGoLockSlow));
      for (uint64_t ret : mutex.lock_slow_returns) {
        INCISE_RETURN_IF_ERROR(attach_one(skel_->progs.go_lock_acquired, goid, ret,
                                          std::string(kGoLockSlow) + " return"));
      }
      INCISE_RETURN_IF_ERROR(
          attach_one(skel_->progs.go_unlock_slow, goid, mutex.unlock_slow, kGoUnlockSlow));
      for (uint64_t ret : mutex.unlock_slow_returns) {
        INCISE_RETURN_IF_ERROR(attach_one(skel_->progs.go_unlock_done, goid, ret,
                                          std::string(kGoUnlockSlow) + " return"));
      }
    }
    if (!probed.waits) return Status::ok();
    for (const GoWaitFunction& wait : probed.waits->waits) {
      const uint64_t cookie = GO_WAIT_COOKIE(index, wait.role);
      INCISE_RETURN_IF_ERROR(
          attach_one(skel_->progs.go_sema_wait, cookie, wait.probe.entry, wait.name));
      for (uint64_t ret : wait.probe.returns) {
        INCISE_RETURN_IF_ERROR(
            attach_one(skel_->progs.go_sema_woken, cookie, ret, wait.name + " return"));
      }
    }
    for (uint64_t wake : probed.waits->wakes) {
      INCISE_RETURN_IF_ERROR(attach_one(skel_->progs.go_sema_wake, GO_WAIT_COOKIE(index, 0), wake,
                                        "a Go semaphore release"));
    }
    return Status::ok();
  }

  // Before the recorder drops its capabilities: the programs the attacher
  // may link, by the ids it answers.
  Status handProgramsToAttacher() {
    for (bpf_program* program :
         {skel_->progs.go_lock_slow, skel_->progs.go_lock_acquired, skel_->progs.go_unlock_slow,
          skel_->progs.go_unlock_done, skel_->progs.go_sema_wait, skel_->progs.go_sema_woken,
          skel_->progs.go_sema_wake}) {
      Result<uint32_t> id = attacher_->addProgram(bpf_program__fd(program));
      if (!id) return id.error().context("go mutex");
      program_ids_.emplace_back(program, *id);
    }
    return Status::ok();
  }

  // A target exec'd: a Go executable not probed yet gets its probes through
  // the attacher, on the very file the process runs (its descriptor is what
  // is parsed and what the attacher probes).
  void onExec(uint32_t pid) {
    const uint64_t seen_ns = monotonicNowNs();
    const std::string exe_link = "/proc/" + std::to_string(pid) + "/exe";
    UniqueFd exe(::open(exe_link.c_str(), O_RDONLY | O_CLOEXEC));
    if (!exe) {  // gone already: whether it ran Go is not known
      ++exited_unread_;
      return;
    }
    const std::string path = "/proc/self/fd/" + std::to_string(exe.get());
    std::optional<FileIdentity> key = fileIdentity(path);
    if (!key || seen_.count(*key)) return;
    if (seen_.size() == kMaxSeenExecutables) {
      ++unseen_;
      return;
    }
    seen_.insert(*key);
    Result<std::optional<go_process>> layout = goThreadLayout(path);
    if (layout && !*layout) return;  // not Go
    if (followed_ == kMaxFollowedExecutables || probes_.size() == MAX_GO_WAIT_SITES) {
      ++unprobed_;
      return;
    }
    ++followed_;
    const std::string name = executableName(exe_link);
    std::optional<Probed> probed = probe(TargetExecutable{.path = path, .pid = -1}, layout);
    for (std::string& note : notes_) sink_->addNote(replacedAll(note, path, name));
    notes_.clear();
    if (!probed) return;
    const uint32_t index = static_cast<uint32_t>(probes_.size());
    size_t needed = 0;
    (void)attachProbes(*probed, index, [&](bpf_program*, uint64_t, uint64_t, const std::string&) {
      ++needed;
      return Status::ok();
    });
    if (attached_links_.size() + needed > kMaxFollowedProbes) {
      ++unprobed_;
      return;
    }

    if (bpf_map__update_elem(skel_->maps.go_sites, &index, sizeof(index), &probed->site,
                             sizeof(go_wait_site), BPF_ANY) != 0) {
      sink_->addNote("go mutex: " + name + ": fill go_sites: " + std::strerror(errno) +
                     ": its Go waits are not recorded");
      return;
    }
    std::vector<UniqueFd> links;
    Status attached = attachProbes(
        *probed, index,
        [&](bpf_program* program, uint64_t cookie, uint64_t offset, const std::string&) -> Status {
          INCISE_ASSIGN_OR_RETURN(UniqueFd link, attacher_->attach(programId(program), exe.get(),
                                                                   offset, false, cookie));
          links.push_back(std::move(link));
          return Status::ok();
        });
    if (!attached) {  // the links made so far close: none of its probes stays
      sink_->addNote("go mutex: " + name + ": " + attached.message() +
                     ": its Go waits are not recorded");
      return;
    }
    probed->binary = name;
    probes_.push_back(std::move(*probed));
    const std::string after = std::to_string(links.size()) + " probes attached, " +
                              std::to_string((monotonicNowNs() - seen_ns) / 1'000'000) +
                              " ms after the recorder saw its exec";
    const std::string process = "go mutex: " + name + " (pid " + std::to_string(pid) + ")";
    if (access(("/proc/" + std::to_string(pid)).c_str(), F_OK) != 0) {
      sink_->addNote(process + " exited before its probes attached: none of its Go waits are " +
                     "recorded (its " + after + "; later runs of it are recorded)");
    } else {
      sink_->addNote(process + " started during the recording: its Go waits are recorded " +
                     "from when its " + after);
    }
    for (UniqueFd& link : links) attached_links_.push_back(std::move(link));
  }

  uint32_t programId(const bpf_program* program) const {
    for (const auto& [known, id] : program_ids_) {
      if (known == program) return id;
    }
    return std::numeric_limits<uint32_t>::max();  // no such id: the attacher refuses it
  }

  static std::string replacedAll(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
    return text;
  }

  Status attachAt(bpf_program* program, const Probed& probed, uint64_t cookie, uint64_t offset,
                  const std::string& what) {
    auto opts = libbpfOptions<bpf_uprobe_opts>();
    opts.bpf_cookie = cookie;
    const std::string& binary = probed.binary;
    bpf_link* link =
        bpf_program__attach_uprobe_opts(program, probed.pid, binary.c_str(), offset, &opts);
    if (!link) return libbpfError("go mutex: attach uprobe " + what + " in " + binary, errno);
    links_.emplace_back(link);
    return Status::ok();
  }

  static int onRecord(void* context, void* data, size_t size) {
    static_cast<GoMutexSource*>(context)->decode(data, size);
    return 0;
  }

  void decode(const void* data, size_t size) {
    if (size < sizeof(event_header)) return;
    if (static_cast<const event_header*>(data)->type == EVENT_GO_MUTEX_UNLOCK) {
      decodeUnlock(*static_cast<const go_mutex_unlock_event*>(data), size);
      return;
    }
    const auto* e = static_cast<const go_mutex_wait_event*>(data);
    if (e->header.type != EVENT_GO_MUTEX_WAIT || stackEventSize(*e, size) == 0) return;
    sink_->processes().noteThread(e->header.pid, e->header.tid, e->header.time);
    if (e->releaser_tid != 0)
      sink_->processes().noteThread(e->header.pid, e->releaser_tid, e->header.time);
    sink_->append(format::LockInterval{
        .time = e->request_ns,
        .acquired_time = e->header.time,
        .pid = e->header.pid,
        .tid = e->header.tid,
        .address = e->mutex,
        .lock_kind = e->lock_kind,
        // lockSlow's rows: the holds come from them and the slow unlocks.
        .flags = LOCK_FLAG_CONTENDED | LOCK_FLAG_CONTENDED_ONLY |
                 (e->lock_kind == LOCK_KIND_MUTEX ? uint64_t{format::kLockGoSlowPath} : 0),
        .stack_id = sink_->internStack(e->header.pid, e->stack),
        .releaser_tid = e->releaser_tid,
        .goid = e->goid,
        .releaser_goid = e->releaser_goid,
    });
  }

  void decodeUnlock(const go_mutex_unlock_event& e, size_t size) {
    if (stackEventSize(e, size) == 0) return;
    sink_->processes().noteThread(e.header.pid, e.header.tid, e.header.time);
    sink_->append(format::LockRelease{
        .time = e.release_ns,
        .pid = e.header.pid,
        .tid = e.header.tid,
        .address = e.mutex,
        .lock_kind = static_cast<uint64_t>(format::LockKind::kMutex),
        .goid = e.goid,
        .stack_id = sink_->internStack(e.header.pid, e.stack),
        .return_time = e.header.time,
    });
  }

  std::vector<Probed> probes_;
  std::vector<std::string> notes_;
  SkeletonPtr<go_mutex_bpf> skel_{nullptr, &go_mutex_bpf__destroy};
  std::vector<LinkPtr> links_;
  DropCounter drops_;
  EventSink* sink_ = nullptr;
  // Following execs under -a and --cgroup (null: not following).
  UprobeAttacher* attacher_ = nullptr;
  std::vector<std::pair<const bpf_program*, uint32_t>> program_ids_;
  std::set<FileIdentity> seen_;  // executables probed or looked at
  size_t followed_ = 0;
  size_t unprobed_ = 0;
  size_t unseen_ = 0;
  size_t exited_unread_ = 0;              // processes gone before their executables were read
  std::vector<UniqueFd> attached_links_;  // the attacher's links: closing one detaches
};

}  // namespace

std::unique_ptr<Source> makeGoMutexSource(UprobeAttacher* attacher) {
  return std::make_unique<GoMutexSource>(attacher);
}

}  // namespace incise::recorder
