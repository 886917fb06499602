#include "recorder/sources/preload_lock_source.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "recorder/event_sink.h"
#include "recorder/ring_poller.h"
#include "recorder/sources/preload_ring_reader.h"
#include "recorder/sources/preload_sections.h"
#include "recorder/target_filter.h"

namespace incise::recorder {
namespace {

// How often the poll loop turns the reader's queue into rows.
constexpr long kTakeIntervalNs = 5'000'000;

bool isFutexWait(const format::LockInterval& row) {
  return row.lock_kind == static_cast<uint64_t>(format::LockKind::kFutex) &&
         (row.flags & format::kLockFutexFacts);
}

class PreloadLockSource final : public Source {
 public:
  explicit PreloadLockSource(std::shared_ptr<PreloadRings> rings) : reader_(std::move(rings)) {}
  std::string_view name() const override { return "locks (preload)"; }
  const bpf_object* bpfObject() const override { return nullptr; }

  Status open(const RecordConfig&, TargetFilter& filter) override {
    filter_ = &filter;
    timer_ = UniqueFd(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
    if (!timer_) return Error::fromErrno(errno, "locks (preload): timerfd_create");
    itimerspec every{.it_interval = {0, kTakeIntervalNs}, .it_value = {0, kTakeIntervalNs}};
    if (timerfd_settime(timer_.get(), 0, &every, nullptr) != 0)
      return Error::fromErrno(errno, "locks (preload): timerfd_settime");
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    sections_.emplace([this](const format::LockInterval& row) { sink_->append(row); },
                      [this](uint32_t pid, uint64_t site) { return siteStack(pid, site); });
    INCISE_RETURN_IF_ERROR(poller.addDrain(std::span<const UniqueFd>(&timer_, 1), [this] {
      uint64_t expirations;
      (void)!read(timer_.get(), &expirations, sizeof(expirations));
      reader_.take(batch_);
      decode();
    }));
    sink.setWaitClaim([this](const format::LockInterval& wait) { return claim(wait); });
    return reader_.start();
  }

  void pollLost(EventSink& sink) override {
    sections_->flush(monotonicNowNs());
    uint64_t lost = reader_.lost();
    if (lost > lost_reported_) sink.noteLost(format::LostSource::kLocks, lost - lost_reported_);
    lost_reported_ = std::max(lost, lost_reported_);
  }

  void finish(EventSink& sink) override {
    reader_.stop();
    reader_.take(batch_);
    decode();
    sink.setWaitClaim(nullptr);
    sections_->finish();
    pollLost(sink);
    if (malformed_ != 0)
      sink.addNote("locks (preload): " + std::to_string(malformed_) +
                   " malformed ring records were ignored");
    if (foreign_ != 0)
      sink.addNote("locks (preload): " + std::to_string(foreign_) +
                   " ring records naming a process the recording does not follow were ignored");
  }

 private:
  // Makes rows of batch_ and empties it. A ring's pid and tid are written
  // by the program it records: a ring naming a process outside the
  // recording (which no followed program could have made) is not believed.
  void decode() {
    std::pair<uint32_t, uint32_t> last_thread{0, 0};
    bool followed = false;
    for (const RingRecord& r : batch_) {
      if (std::pair(r.pid, r.tid) != last_thread) {
        last_thread = {r.pid, r.tid};
        followed = isFollowed(r.pid);
        if (followed && noted_threads_.insert(last_thread).second)
          sink_->processes().noteThread(r.pid, r.tid, r.record.time);
      }
      if (!followed) {
        ++foreign_;
        continue;
      }
      if (!sections_->onRecord(r.pid, r.tid, r.record)) ++malformed_;
    }
    batch_.clear();
  }

  // The targets map keeps a process after its exit: its last records, drained
  // later, still pass.
  bool isFollowed(uint32_t pid) {
    auto [it, inserted] = followed_.try_emplace(pid, false);
    if (inserted) it->second = pid != 0 && filter_->isTarget(pid);
    return it->second;
  }

  // The one-frame stack of a call site, interned once per process and site.
  uint64_t siteStack(uint32_t pid, uint64_t site) {
    if (site == 0) return 0;
    auto [it, inserted] = site_stacks_.try_emplace({pid, site}, 0);
    if (inserted) it->second = sink_->internStack(pid, std::span<const uint64_t>(&site, 1), 0);
    return it->second;
  }

  // A futex wait of the scheduler source: the thread's lock call's, if it
  // was in one (recorder/sources/preload_sections.h).
  bool claim(const format::LockInterval& wait) {
    if (!isFutexWait(wait)) return false;
    uint64_t call_request = reader_.takeThread(static_cast<uint32_t>(wait.pid),
                                               static_cast<uint32_t>(wait.tid), batch_);
    decode();
    return sections_->claimWait(wait, call_request);
  }

  PreloadRingReader reader_;
  UniqueFd timer_;
  EventSink* sink_ = nullptr;
  std::optional<PreloadSections> sections_;
  std::vector<RingRecord> batch_;
  std::set<std::pair<uint32_t, uint32_t>> noted_threads_;
  std::map<uint32_t, bool> followed_;  // by pid: in the targets map when first named
  const TargetFilter* filter_ = nullptr;
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> site_stacks_;
  uint64_t lost_reported_ = 0;
  uint64_t malformed_ = 0;
  uint64_t foreign_ = 0;
};

}  // namespace

std::unique_ptr<Source> makePreloadLockSource(std::shared_ptr<PreloadRings> rings) {
  return std::make_unique<PreloadLockSource>(std::move(rings));
}

}  // namespace incise::recorder
