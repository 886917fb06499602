// Mmap-record source: see mmap_source.h.
#include "recorder/sources/mmap_source.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>

#include "base/unique_fd.h"
#include "recorder/event_sink.h"
#include "recorder/libbpf_error.h"
#include "recorder/metadata/mmap_record_feed.h"
#include "recorder/online_cpus.h"
#include "recorder/perf_event_open.h"
#include "recorder/perf_ring.h"
#include "recorder/ring_poller.h"
#include "recorder/sources/kernel_records.h"
#include "recorder/target_filter.h"

namespace incise::recorder {

namespace {

// 256 KiB per CPU: a process start (exec, ld.so, a few libraries, the
// vDSO) writes ~1 KB of records, and the ring wakes the recorder half full.
constexpr size_t kDataPages = 64;

perf_event_attr sidebandAttr(bool build_id, bool inherit, size_t ring_bytes) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.sample_type = kKernelRecordSampleType;
  attr.sample_id_all = 1;
  attr.mmap = 1;  // executable mappings only (mmap_data stays 0)
  attr.mmap2 = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
  attr.build_id = build_id ? 1 : 0;
  attr.inherit = inherit ? 1 : 0;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;  // bpf_ktime_get_ns()'s clock
  attr.watermark = 1;
  attr.wakeup_watermark = static_cast<uint32_t>(ring_bytes / 2);
  return attr;
}

uint64_t clockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

class MmapSource final : public Source {
 public:
  std::string_view name() const override { return "mmap records"; }
  const bpf_object* bpfObject() const override { return nullptr; }

  ~MmapSource() override {
    if (sink_) sink_->processes().stopCatchUp();
  }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    verbose_ = config.verbose;
    switch (config.target_kind) {
      case TargetKind::kCommand: {
        std::vector<uint32_t> pids = filter.pids();
        if (pids.size() != 1) return Error("mmap records: the command's pid is not known yet");
        task_ = static_cast<int>(pids.front());
        inherit_ = true;
        break;
      }
      case TargetKind::kCgroup:
        cgroup_fd_.reset(::open(config.cgroup_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!cgroup_fd_)
          return Error("mmap records: open cgroup " + config.cgroup_path + ": " +
                       std::strerror(errno));
        break;
      case TargetKind::kPids:
        only_targets_ = true;
        break;
      case TargetKind::kAll:
        break;
    }
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    Result<std::vector<int>> cpus = onlineCpus();
    if (!cpus) return cpus.error().context("mmap records");
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const int pid = cgroup_fd_ ? cgroup_fd_.get() : task_;
    const unsigned long flags = cgroup_fd_ ? PERF_FLAG_PID_CGROUP : 0;
    // Records before this time may be missing: a process's /proc maps read
    // later stands for its mappings up to here.
    const uint64_t stream_start = clockNs(CLOCK_MONOTONIC);
    for (int cpu : *cpus) {
      perf_event_attr attr = sidebandAttr(build_ids_from_kernel_, inherit_, kDataPages * page);
      int fd = openPerfEvent(attr, pid, cpu, flags);
      if (fd < 0 && errno == EINVAL && build_ids_from_kernel_) {
        // Before 5.12 the records carry the inode; build-ids are read from the files.
        build_ids_from_kernel_ = false;
        attr = sidebandAttr(false, inherit_, kDataPages * page);
        fd = openPerfEvent(attr, pid, cpu, flags);
      }
      if (fd < 0)
        return Error("mmap records: perf_event_open on cpu " + std::to_string(cpu) + ": " +
                     std::strerror(errno));
      fds_.emplace_back(fd);
      Result<PerfRing> ring = PerfRing::map(fd, kDataPages);
      if (!ring) return ring.error().context("mmap records: cpu " + std::to_string(cpu));
      rings_.push_back(ring.take());
    }
    ProcessTracker& tracker = sink.processes();
    feed_.emplace(tracker.mappings());
    INCISE_RETURN_IF_ERROR(poller.addDrain(fds_, [this] { drain(); }));
    tracker.mappings().setFollowOnlyKnown(only_targets_);
    tracker.mappings().ignorePid(static_cast<uint32_t>(getpid()));
    tracker.useKernelRecords(stream_start, [this] { drain(); });
    if (!build_ids_from_kernel_)
      sink.addNote("mmap records: this kernel puts no build-id in them; read from the files");
    return Status::ok();
  }

  void pollLost(EventSink& sink) override {
    if (!feed_ || feed_->lost() == reported_lost_) return;
    sink.noteLost(format::LostSource::kProcess, feed_->lost() - reported_lost_);
    reported_lost_ = feed_->lost();
  }

  void finish(EventSink& sink) override {
    if (!feed_) return;
    drain();
    // What following the mappings cost, in the trace and with -v.
    char note[200];
    std::snprintf(note, sizeof(note),
                  "mmap records: %llu applied (%llu stale, %llu lost) in %llu drains, %.1f ms of "
                  "recorder CPU",
                  static_cast<unsigned long long>(feed_->applied()),
                  static_cast<unsigned long long>(sink.processes().mappings().staleRecords()),
                  static_cast<unsigned long long>(feed_->lost()),
                  static_cast<unsigned long long>(timed_drains_),
                  static_cast<double>(cpu_ns_) / 1e6);
    sink.addNote(note);
    if (verbose_) std::fprintf(stderr, "incise-record: %s\n", note);
  }

 private:
  // Takes every ring's records and applies them (MmapRecordFeed puts them
  // in time order).
  void drain() {
    if (draining_ || !feed_) return;
    bool any = false;
    for (const PerfRing& ring : rings_) any = any || !ring.empty();
    if (!any) return;
    draining_ = true;
    const uint64_t cpu_start = clockNs(CLOCK_THREAD_CPUTIME_ID);
    batch_.clear();
    for (PerfRing& ring : rings_) {
      ring.consume([this](std::span<const uint8_t> bytes) {
        std::optional<KernelRecord> record = decodeKernelRecord(bytes);
        if (record) batch_.push_back(std::move(*record));
      });
    }
    feed_->apply(batch_);
    ++timed_drains_;
    cpu_ns_ += clockNs(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
    draining_ = false;
  }

  EventSink* sink_ = nullptr;
  int task_ = -1;  // -1: every task
  UniqueFd cgroup_fd_;
  bool inherit_ = false;
  bool only_targets_ = false;
  bool build_ids_from_kernel_ = true;
  bool draining_ = false;
  bool verbose_ = false;
  uint64_t cpu_ns_ = 0;  // spent draining and applying records
  uint64_t timed_drains_ = 0;
  std::vector<UniqueFd> fds_;
  std::vector<PerfRing> rings_;  // after fds_: unmapped before the events close
  std::vector<KernelRecord> batch_;
  std::optional<MmapRecordFeed> feed_;
  uint64_t reported_lost_ = 0;
};

}  // namespace

std::unique_ptr<Source> makeMmapSource() {
  return std::make_unique<MmapSource>();
}

}  // namespace incise::recorder
