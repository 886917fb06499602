#include "recorder/sources/preload_ring_reader.h"

#include <time.h>

#include <filesystem>
#include <string>

#include "recorder/capabilities.h"

namespace incise::recorder {
namespace {

using preload::RingState;
using preload::ThreadRing;

constexpr long kCopyIntervalNs = 1'000'000;
constexpr size_t kInitialQueue = 1u << 16;
// Rings whose thread may have died without its exit hook (the main thread
// leaves through exit(), a process is killed) are checked this often.
constexpr int kSweepEveryCopies = 1000;

uint32_t ownerPid(ThreadRing* ring) {
  return std::atomic_ref<uint32_t>(ring->header.pid).load(std::memory_order_relaxed);
}
uint32_t ownerTid(ThreadRing* ring) {
  return std::atomic_ref<uint32_t>(ring->header.tid).load(std::memory_order_relaxed);
}
uint32_t stateOf(ThreadRing* ring) {
  return ring->header.state.load(std::memory_order_acquire);
}

void freeRing(ThreadRing* ring, uint32_t state) {
  ring->header.state.compare_exchange_strong(state, static_cast<uint32_t>(RingState::kFree),
                                             std::memory_order_acq_rel);
}

}  // namespace

PreloadRingReader::PreloadRingReader(std::shared_ptr<PreloadRings> rings)
    : rings_(std::move(rings)) {
  queue_.reserve(kInitialQueue);
}

PreloadRingReader::~PreloadRingReader() {
  stop();
}

Status PreloadRingReader::start() {
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& error) {
    return Error(std::string("locks (preload): start the ring reader: ") + error.what());
  }
  return Status::ok();
}

void PreloadRingReader::stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  for (uint32_t i = 0; i < rings_->ringCount(); ++i) copyRing(i);
}

void PreloadRingReader::run() {
  // It only reads and writes the shared rings and /proc: nothing it needs a capability for.
  (void)keepOnlyCapabilities({}, "locks (preload): ring reader");
  for (int copies = 0; !stopping_.load(std::memory_order_relaxed); ++copies) {
    {
      std::lock_guard lock(mutex_);
      for (uint32_t i = 0; i < rings_->ringCount(); ++i) copyRing(i);
      if (copies % kSweepEveryCopies == 0) freeRingsOfDeadThreads();
    }
    timespec interval{0, kCopyIntervalNs};
    nanosleep(&interval, nullptr);
  }
}

void PreloadRingReader::copyRing(uint32_t index) {
  ThreadRing* ring = rings_->ring(index);
  uint32_t state = stateOf(ring);
  if (state == static_cast<uint32_t>(RingState::kFree)) return;
  auto& header = ring->header;
  uint64_t end = header.write_pos.load(std::memory_order_acquire);
  uint64_t position = header.read_pos.load(std::memory_order_relaxed);
  if (end - position > preload::kRecordsPerRing) {
    impossible_.fetch_add(1, std::memory_order_relaxed);  // not positions the library writes
    header.read_pos.store(end, std::memory_order_release);
    return;
  }
  if (queue_.size() >= kMaxQueued) return;  // the ring keeps them, or counts them lost
  end = std::min<uint64_t>(end, position + (kMaxQueued - queue_.size()));
  uint32_t pid = ownerPid(ring);
  uint32_t tid = ownerTid(ring);
  for (; position != end; ++position)
    queue_.push_back({pid, tid, ring->records[position & (preload::kRecordsPerRing - 1)]});
  header.read_pos.store(end, std::memory_order_release);
  if (state == static_cast<uint32_t>(RingState::kExited) &&
      end == header.write_pos.load(std::memory_order_acquire))
    freeRing(ring, state);
}

void PreloadRingReader::freeRingsOfDeadThreads() {
  for (uint32_t i = 0; i < rings_->ringCount(); ++i) {
    ThreadRing* ring = rings_->ring(i);
    uint32_t state = stateOf(ring);
    if (state != static_cast<uint32_t>(RingState::kOwned)) continue;
    uint32_t pid = ownerPid(ring);
    uint32_t tid = ownerTid(ring);
    if (pid == 0 || tid == 0) continue;  // being claimed
    std::error_code error;
    std::string task = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid);
    if (std::filesystem::exists(task, error) || error) continue;
    copyRing(i);
    if (ring->header.read_pos.load() == ring->header.write_pos.load()) freeRing(ring, state);
  }
}

void PreloadRingReader::take(std::vector<RingRecord>& records) {
  std::lock_guard lock(mutex_);
  records.swap(queue_);
}

uint64_t PreloadRingReader::takeThread(uint32_t pid, uint32_t tid,
                                       std::vector<RingRecord>& records) {
  std::lock_guard lock(mutex_);
  for (uint32_t i = 0; i < rings_->ringCount(); ++i) {
    ThreadRing* ring = rings_->ring(i);
    if (stateOf(ring) == static_cast<uint32_t>(RingState::kFree) || ownerPid(ring) != pid ||
        ownerTid(ring) != tid)
      continue;
    uint64_t call_request = ring->header.call_request.load(std::memory_order_acquire);
    copyRing(i);
    records.swap(queue_);
    return call_request;
  }
  // Its ring was given back at its exit, emptied first: it is in no call.
  records.swap(queue_);
  return 0;
}

uint64_t PreloadRingReader::lost() const {
  uint64_t lost = rings_->area()->lost_without_ring.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < rings_->ringCount(); ++i)
    lost += rings_->ring(i)->header.lost.load(std::memory_order_relaxed);
  return lost + impossible_.load(std::memory_order_relaxed);
}

}  // namespace incise::recorder
