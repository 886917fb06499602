#include "recorder/sources/go_mutex_source.h"

#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "bpf/go_mutex.h"
#include "bpf/locks.h"
#include "go_mutex.skel.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/libbpf_error.h"
#include "recorder/probes/go_goid_offset.h"
#include "recorder/probes/go_mutex_probes.h"
#include "recorder/ring_poller.h"
#include "recorder/sources/skeleton_setup.h"
#include "recorder/sources/stack_event_size.h"
#include "recorder/target_filter.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "go mutex";

bool isExecutableFile(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

// execvp's search: a name with a slash as it is, else each PATH entry.
std::string findProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (isExecutableFile(candidate)) return candidate;
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

class GoMutexSource final : public Source {
 public:
  std::string_view name() const override { return kName; }
  const bpf_object* bpfObject() const override { return skel_ ? skel_->obj : nullptr; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    for (const TargetExecutable& target : targetExecutables(config)) {
      Result<std::optional<GoMutexProbes>> found = findGoMutexProbes(target.path);
      if (!found) {
        notes_.push_back(found.error().message() + ": Go mutex waits are not recorded");
        continue;
      }
      if (!*found) continue;
      Result<uint64_t> goid_offset = goroutineIdOffset(target.path);
      if (!goid_offset)
        notes_.push_back(goid_offset.error().message() + ": Go mutex waits carry no goroutine ids");
      probes_.push_back({std::move(**found), target.pid, goid_offset ? *goid_offset : GO_NO_GOID});
    }
    if (probes_.empty()) return Status::ok();  // nothing to load

    skel_.reset(go_mutex_bpf__open());
    if (!skel_) return libbpfError("go mutex: open", errno);
    if (Status s = prepareSkeleton(skel_.get(), filter, ringBytesFor(config, 1)); !s)
      return s.error().context("go mutex");
    if (int err = go_mutex_bpf__load(skel_.get())) return libbpfError("go mutex: load", err);
    drops_ = DropCounter(skel_->maps.drops);
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    for (const std::string& note : notes_) sink.addNote(note);
    if (!skel_) return Status::ok();
    for (const Probed& probed : probes_) {
      INCISE_RETURN_IF_ERROR(
          attachAt(skel_->progs.go_lock_slow, probed, probed.probes.lock_slow, kGoLockSlow));
      for (uint64_t ret : probed.probes.lock_slow_returns) {
        INCISE_RETURN_IF_ERROR(attachAt(skel_->progs.go_lock_acquired, probed, ret,
                                        std::string(kGoLockSlow) + " return"));
      }
      INCISE_RETURN_IF_ERROR(
          attachAt(skel_->progs.go_unlock_slow, probed, probed.probes.unlock_slow, kGoUnlockSlow));
    }
    return poller.add(bpf_map__fd(skel_->maps.events), &GoMutexSource::onRecord, this);
  }

  void pollLost(EventSink& sink) override {
    if (skel_) drops_.poll(sink);
  }

 private:
  struct Probed {
    GoMutexProbes probes;
    int pid = -1;
    uint64_t goid_offset = GO_NO_GOID;  // the attach cookie
  };

  Status attachAt(bpf_program* program, const Probed& probed, uint64_t offset,
                  const std::string& what) {
    LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = probed.goid_offset);
    const std::string& binary = probed.probes.binary;
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
        .lock_kind = LOCK_KIND_MUTEX,
        .flags = LOCK_FLAG_CONTENDED | LOCK_FLAG_CONTENDED_ONLY,
        .stack_id = sink_->internStack(e->header.pid, e->stack),
        .releaser_tid = e->releaser_tid,
        .goid = e->goid,
        .releaser_goid = e->releaser_goid,
    });
  }

  std::vector<Probed> probes_;
  std::vector<std::string> notes_;
  SkeletonPtr<go_mutex_bpf> skel_{nullptr, &go_mutex_bpf__destroy};
  std::vector<LinkPtr> links_;
  DropCounter drops_;
  EventSink* sink_ = nullptr;
};

}  // namespace

std::vector<TargetExecutable> targetExecutables(const RecordConfig& config) {
  std::vector<TargetExecutable> targets;
  if (config.target_kind == TargetKind::kCommand && !config.command.empty()) {
    std::string program = findProgram(config.command.front());
    if (!program.empty()) targets.push_back({.path = program, .pid = -1});
  } else if (config.target_kind == TargetKind::kPids) {
    for (uint32_t pid : config.pids)
      targets.push_back(
          {.path = "/proc/" + std::to_string(pid) + "/exe", .pid = static_cast<int>(pid)});
  }
  return targets;
}

std::unique_ptr<Source> makeGoMutexSource() {
  return std::make_unique<GoMutexSource>();
}

}  // namespace incise::recorder
