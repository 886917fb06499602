#include "preload/thread_ring.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload/ring_area.h"

namespace incise::preload {
namespace {

struct ThreadState {
  ThreadRing* ring;
  bool ring_sought;  // claimRing ran (it found one, or none was free)
  bool exited;       // past the thread-exit destructor: nothing more is recorded
  bool writing;      // inside push: a signal handler's record is counted lost
};

// initial-exec: a preloaded library's TLS is static, and reaching it needs
// no __tls_get_addr (which may allocate on a thread's first access).
__thread ThreadState t_state __attribute__((tls_model("initial-exec")));

pthread_key_t g_exit_key;
bool g_exit_key_made = false;

void onThreadExit(void* ring) {
  static_cast<ThreadRing*>(ring)->header.state.store(static_cast<uint32_t>(RingState::kExited),
                                                     std::memory_order_release);
  t_state.ring = nullptr;
  t_state.exited = true;
}

// The forking thread's ring is its parent's: the child's thread claims its own.
void onForkChild() {
  t_state = ThreadState{};
  if (g_exit_key_made) pthread_setspecific(g_exit_key, nullptr);
}

ThreadRing* claimRing(AreaHeader* area) {
  for (uint32_t i = 0; i < area->ring_count; ++i) {
    ThreadRing* ring = ringAt(area, i);
    uint32_t expected = static_cast<uint32_t>(RingState::kFree);
    if (!ring->header.state.compare_exchange_strong(
            expected, static_cast<uint32_t>(RingState::kOwned), std::memory_order_acq_rel))
      continue;
    // Published to the recorder by the first record's write_pos (release).
    ring->header.pid = static_cast<uint32_t>(getpid());
    ring->header.tid = static_cast<uint32_t>(syscall(SYS_gettid));
    if (g_exit_key_made) pthread_setspecific(g_exit_key, ring);
    return ring;
  }
  return nullptr;
}

}  // namespace

uint64_t monotonicNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

ThreadRing* currentRing() {
  ThreadState& state = t_state;
  if (state.ring) return state.ring;
  if (state.ring_sought || state.exited) return nullptr;
  if (areaState() != AreaState::kAttached) return nullptr;
  state.ring_sought = true;
  state.ring = claimRing(ringArea());
  return state.ring;
}

void push(ThreadRing* ring, const Record& record) {
  ThreadState& state = t_state;
  if (state.writing) {
    noteUnrecorded();
    return;
  }
  state.writing = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  RingHeader& header = ring->header;
  uint64_t position = header.write_pos.load(std::memory_order_relaxed);
  if (position - header.read_pos.load(std::memory_order_acquire) >= kRecordsPerRing) {
    header.lost.fetch_add(1, std::memory_order_relaxed);
  } else {
    ring->records[position & (kRecordsPerRing - 1)] = record;
    header.write_pos.store(position + 1, std::memory_order_release);
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  state.writing = false;
}

void noteUnrecorded() {
  // Past its exit hook a thread records nothing more, by design: not a loss.
  if (t_state.exited) return;
  if (AreaHeader* area = ringArea())
    area->lost_without_ring.fetch_add(1, std::memory_order_relaxed);
}

void installThreadHooks() {
  g_exit_key_made = pthread_key_create(&g_exit_key, onThreadExit) == 0;
  pthread_atfork(nullptr, nullptr, onForkChild);
}

}  // namespace incise::preload
