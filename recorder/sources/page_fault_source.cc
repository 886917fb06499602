#include "recorder/sources/page_fault_source.h"

#include <linux/perf_event.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

#include "base/unique_fd.h"
#include "bpf/page_faults.h"
#include "page_faults.skel.h"
#include "recorder/drop_counter.h"
#include "recorder/event_sink.h"
#include "recorder/online_cpus.h"
#include "recorder/perf_event_open.h"
#include "recorder/ring_poller.h"
#include "recorder/sources/skeleton_setup.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kName = "page faults";

class PageFaultSource final : public Source {
 public:
  std::string_view name() const override { return kName; }
  const bpf_object* bpfObject() const override { return skel_ ? skel_->obj : nullptr; }

  Status open(const RecordConfig& config, TargetFilter& filter) override {
    period_ = config.page_fault_period == 0 ? 1 : config.page_fault_period;
    skel_.reset(page_faults_bpf__open());
    if (!skel_) return libbpfError("page faults: open", errno);
    if (Status s = prepareSkeleton(skel_.get(), filter, ringBytesFor(config, 1)); !s)
      return s.error().context("page faults");
    if (int err = page_faults_bpf__load(skel_.get())) return libbpfError("page faults: load", err);
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    Result<std::vector<int>> cpus = onlineCpus();
    if (!cpus) return cpus.error().context("page faults");
    for (int cpu : *cpus) {
      perf_event_attr attr{};
      attr.size = sizeof(attr);
      attr.type = PERF_TYPE_SOFTWARE;
      attr.config = PERF_COUNT_SW_PAGE_FAULTS;
      attr.sample_period = period_;
      attr.sample_type = PERF_SAMPLE_ADDR;
      int fd = openPerfEvent(attr, -1, cpu);
      if (fd < 0)
        return libbpfError("page faults: perf_event_open on cpu " + std::to_string(cpu), errno);
      perf_fds_.emplace_back(fd);
      bpf_link* link = bpf_program__attach_perf_event(skel_->progs.on_page_fault, fd);
      if (!link) return libbpfError("page faults: attach to cpu " + std::to_string(cpu), errno);
      links_.emplace_back(link);
    }
    drops_ = DropCounter(skel_->maps.drops);
    return poller.add(bpf_map__fd(skel_->maps.events), &PageFaultSource::onRecord, this);
  }

  void pollLost(EventSink& sink) override { drops_.poll(sink); }

 private:
  static int onRecord(void* context, void* data, size_t size) {
    static_cast<PageFaultSource*>(context)->decode(data, size);
    return 0;
  }

  void decode(const void* data, size_t size) {
    constexpr size_t kFixed = offsetof(page_fault_event, stack.frames);
    if (size < kFixed) return;
    const auto* e = static_cast<const page_fault_event*>(data);
    if (e->header.type != EVENT_PAGE_FAULT) return;
    if (e->stack.kernel_count > MAX_STACK_DEPTH || e->stack.user_count > MAX_STACK_DEPTH) return;
    size_t frames = size_t{e->stack.kernel_count} + e->stack.user_count;
    if (kFixed + frames * sizeof(uint64_t) > size) return;
    sink_->processes().noteThread(e->header.pid, e->header.tid, e->header.time);
    sink_->append(format::PageFault{.time = e->header.time,
                                    .cpu = e->header.cpu,
                                    .pid = e->header.pid,
                                    .tid = e->header.tid,
                                    .address = e->address,
                                    .stack_id = sink_->internStack(e->header.pid, e->stack)});
  }

  uint64_t period_ = 1;
  SkeletonPtr<page_faults_bpf> skel_{nullptr, &page_faults_bpf__destroy};
  std::vector<UniqueFd> perf_fds_;
  std::vector<LinkPtr> links_;  // after perf_fds_: detached before the events close
  DropCounter drops_;
  EventSink* sink_ = nullptr;
};

}  // namespace

std::unique_ptr<Source> makePageFaultSource() {
  return std::make_unique<PageFaultSource>();
}

}  // namespace incise::recorder
