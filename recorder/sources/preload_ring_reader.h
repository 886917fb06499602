// PreloadRingReader: empties the rings of libincise-preload.so
// (recorder/preload_rings.h) on a thread of its own, every millisecond, into
// a queue that the poll loop takes: the rings then need to cover only the
// reader's own delays, not the poll loop's (start-up, when the recorder
// reads its own symbols for tens of ms while the command already runs, or a
// flush). The queue is bounded (kMaxQueued records); past it the reader
// leaves records in the rings, and a ring that fills counts them lost, so
// the program never waits. The thread holds no capability.
//
// The rings are the recorded program's memory: positions are bounded by the
// ring size (a ring whose positions are impossible is skipped and counted),
// pid and tid are taken as the ring says. A ring its thread left (exit hook)
// is freed once empty, and so is one whose thread /proc no longer shows.
//
//   PreloadRingReader reader(rings);
//   INCISE_RETURN_IF_ERROR(reader.start());
//   reader.take(batch);   // batch: emptied by the caller, its capacity reused
//   for (const RingRecord& r : batch) sections.onRecord(r.pid, r.tid, r.record);
//   uint64_t call_request = reader.takeThread(pid, tid, batch);  // one thread, now
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status.h"
#include "recorder/preload_rings.h"

namespace incise::recorder {

struct RingRecord {
  uint32_t pid;
  uint32_t tid;
  preload::Record record;
};

class PreloadRingReader {
 public:
  static constexpr size_t kMaxQueued = size_t{1} << 20;

  explicit PreloadRingReader(std::shared_ptr<PreloadRings> rings);
  PreloadRingReader(const PreloadRingReader&) = delete;
  PreloadRingReader& operator=(const PreloadRingReader&) = delete;
  ~PreloadRingReader();

  Status start();
  // Stops the thread, then empties every ring into the queue.
  void stop();
  // Everything queued, in each ring's order, into `records` (which must be
  // empty: the two buffers trade places, so neither is allocated again).
  void take(std::vector<RingRecord>& records);
  // For the thread `tid` of `pid`: its ring's call_request, read before its
  // ring is emptied into `records` (empty; after everything queued before it); 0
  // when no ring is that thread's (it never had one, or it exited).
  uint64_t takeThread(uint32_t pid, uint32_t tid, std::vector<RingRecord>& records);
  // Records the rings and the library counted lost, and rings skipped as impossible.
  uint64_t lost() const;

 private:
  void run();
  void copyRing(uint32_t index);  // with mutex_ held
  void freeRingsOfDeadThreads();  // with mutex_ held

  std::shared_ptr<PreloadRings> rings_;
  std::mutex mutex_;
  std::vector<RingRecord> queue_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> impossible_{0};
  std::thread thread_;
};

}  // namespace incise::recorder
