#include "recorder/sources/preload_lock_source.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "recorder/event_sink.h"
#include "recorder/ring_poller.h"
#include "recorder/sources/preload_sections.h"

namespace incise::recorder {
namespace {

using preload::Record;
using preload::RingState;
using preload::ThreadRing;

constexpr long kDrainIntervalNs = 1'000'000;
// Rings whose thread may have died without its exit hook (the main thread
// leaves through exit(), a process is killed) are checked this often.
constexpr uint64_t kSweepIntervalNs = 1'000'000'000;

bool isFutexWait(const format::LockInterval& row) {
  return row.lock_kind == static_cast<uint64_t>(format::LockKind::kFutex) &&
         (row.flags & format::kLockFutexFacts);
}

class PreloadLockSource final : public Source {
 public:
  explicit PreloadLockSource(std::shared_ptr<PreloadRings> rings)
      : rings_(std::move(rings)), cursors_(rings_->ringCount()) {}
  std::string_view name() const override { return "locks (preload)"; }
  const bpf_object* bpfObject() const override { return nullptr; }

  Status open(const RecordConfig&, TargetFilter&) override {
    timer_ = UniqueFd(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
    if (!timer_) return Error::fromErrno(errno, "locks (preload): timerfd_create");
    itimerspec every{.it_interval = {0, kDrainIntervalNs}, .it_value = {0, kDrainIntervalNs}};
    if (timerfd_settime(timer_.get(), 0, &every, nullptr) != 0)
      return Error::fromErrno(errno, "locks (preload): timerfd_settime");
    return Status::ok();
  }

  Status attach(RingPoller& poller, EventSink& sink) override {
    sink_ = &sink;
    sections_.emplace(
        [this](const format::LockInterval& row) { sink_->append(row); },
        [this](uint32_t pid, uint64_t site) {
          return site == 0 ? 0 : sink_->internStack(pid, std::span<const uint64_t>(&site, 1), 0);
        });
    sink.setWaitClaim([this](const format::LockInterval& wait) { return claim(wait); });
    return poller.addDrain(std::span<const UniqueFd>(&timer_, 1), [this] {
      uint64_t expirations;
      (void)!read(timer_.get(), &expirations, sizeof(expirations));
      drainAll();
    });
  }

  void pollLost(EventSink& sink) override {
    uint64_t now = monotonicNowNs();
    sections_->flush(now);
    uint64_t lost = rings_->area()->lost_without_ring.load(std::memory_order_relaxed);
    for (uint32_t i = 0; i < rings_->ringCount(); ++i)
      lost += rings_->ring(i)->header.lost.load(std::memory_order_relaxed);
    if (lost > lost_reported_) sink.noteLost(format::LostSource::kLocks, lost - lost_reported_);
    lost_reported_ = std::max(lost, lost_reported_);
    if (now - last_sweep_ >= kSweepIntervalNs) {
      last_sweep_ = now;
      freeRingsOfDeadThreads();
    }
  }

  void finish(EventSink& sink) override {
    drainAll();
    sink.setWaitClaim(nullptr);
    sections_->finish();
    pollLost(sink);
    if (malformed_ != 0)
      sink.addNote("locks (preload): " + std::to_string(malformed_) +
                   " malformed ring records were ignored");
  }

 private:
  struct Cursor {
    bool thread_noted = false;
    uint32_t pid = 0;
    uint32_t tid = 0;
  };

  void drainAll() {
    for (uint32_t i = 0; i < rings_->ringCount(); ++i) drain(i);
  }

  // Everything in ring `index`. The program writes this memory: positions
  // are bounded by the ring's size, records checked before use.
  void drain(uint32_t index) {
    ThreadRing* ring = rings_->ring(index);
    auto& header = ring->header;
    uint32_t state = header.state.load(std::memory_order_acquire);
    if (state == static_cast<uint32_t>(RingState::kFree)) return;
    uint64_t end = header.write_pos.load(std::memory_order_acquire);
    uint64_t position = header.read_pos.load(std::memory_order_relaxed);
    if (end - position > preload::kRecordsPerRing) {
      sink_->noteLost(format::LostSource::kLocks, 1);  // not a ring the library wrote
      header.read_pos.store(end, std::memory_order_release);
      return;
    }
    uint32_t pid = std::atomic_ref<uint32_t>(header.pid).load(std::memory_order_relaxed);
    uint32_t tid = std::atomic_ref<uint32_t>(header.tid).load(std::memory_order_relaxed);
    Cursor& cursor = cursors_[index];
    if (position != end && (!cursor.thread_noted || cursor.pid != pid || cursor.tid != tid)) {
      cursor = Cursor{.thread_noted = true, .pid = pid, .tid = tid};
      sink_->processes().noteThread(pid, tid, monotonicNowNs());
    }
    for (; position != end; ++position) {
      Record record = ring->records[position & (preload::kRecordsPerRing - 1)];
      if (!sections_->onRecord(pid, tid, record)) ++malformed_;
    }
    header.read_pos.store(end, std::memory_order_release);
    if (state == static_cast<uint32_t>(RingState::kExited)) freeRing(index);
  }

  void freeRing(uint32_t index) {
    auto& header = rings_->ring(index)->header;
    uint32_t expected = header.state.load(std::memory_order_acquire);
    if (expected == static_cast<uint32_t>(RingState::kFree)) return;
    header.state.compare_exchange_strong(expected, static_cast<uint32_t>(RingState::kFree),
                                         std::memory_order_acq_rel);
    cursors_[index] = Cursor{};
  }

  void freeRingsOfDeadThreads() {
    for (uint32_t i = 0; i < rings_->ringCount(); ++i) {
      auto& header = rings_->ring(i)->header;
      if (header.state.load(std::memory_order_acquire) != static_cast<uint32_t>(RingState::kOwned))
        continue;
      uint32_t pid = std::atomic_ref<uint32_t>(header.pid).load(std::memory_order_relaxed);
      uint32_t tid = std::atomic_ref<uint32_t>(header.tid).load(std::memory_order_relaxed);
      if (pid == 0 || tid == 0) continue;  // being claimed
      std::error_code error;
      std::string task = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid);
      if (std::filesystem::exists(task, error) || error) continue;
      drain(i);
      freeRing(i);
    }
  }

  // A futex wait of the scheduler source: the thread's lock call's, if it
  // was in one (recorder/sources/preload_sections.h).
  bool claim(const format::LockInterval& wait) {
    if (!isFutexWait(wait)) return false;
    for (uint32_t i = 0; i < rings_->ringCount(); ++i) {
      auto& header = rings_->ring(i)->header;
      if (header.state.load(std::memory_order_acquire) == static_cast<uint32_t>(RingState::kFree))
        continue;
      if (std::atomic_ref<uint32_t>(header.tid).load(std::memory_order_relaxed) != wait.tid ||
          std::atomic_ref<uint32_t>(header.pid).load(std::memory_order_relaxed) != wait.pid)
        continue;
      uint64_t call_request = header.call_request.load(std::memory_order_acquire);
      drain(i);
      return sections_->claimWait(wait, call_request);
    }
    return false;
  }

  std::shared_ptr<PreloadRings> rings_;
  std::vector<Cursor> cursors_;
  UniqueFd timer_;
  EventSink* sink_ = nullptr;
  std::optional<PreloadSections> sections_;
  uint64_t lost_reported_ = 0;
  uint64_t malformed_ = 0;
  uint64_t last_sweep_ = 0;
};

}  // namespace

std::unique_ptr<Source> makePreloadLockSource(std::shared_ptr<PreloadRings> rings) {
  return std::make_unique<PreloadLockSource>(std::move(rings));
}

}  // namespace incise::recorder
