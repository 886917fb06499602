// The shared memory between libincise-preload.so and the recorder: one memfd
// the recorder creates before it starts `-- CMD`, inherited by the command
// (the descriptor and a token in INCISE_PRELOAD_RINGS), mapped by the library
// in every process of the command that loads it. It holds kMaxThreadRings
// single-producer rings, one per thread that made a lock call; a thread
// claims a free ring at its first call and gives it back at its exit.
//
//   offset 0                  AreaHeader (magic, token, sizes, lost counts)
//   offset sizeof(AreaHeader)  ThreadRing[ring_count]: RingHeader, then
//                              records_per_ring Records
//
// A producer (a thread of the command) writes the record at write_pos %
// records_per_ring, then publishes write_pos + 1 (release); a ring whose
// consumer (the recorder) is records_per_ring behind counts the record in
// `lost` instead: the program never waits for the recorder. Plain C++ with
// fixed-width fields and lock-free atomics, so both sides agree on every
// byte; the library links no C++ runtime.
//
//   const AreaHeader* area = ...;  // mmap of the memfd
//   ThreadRing* ring = ringAt(area, i);
//   uint64_t end = ring->header.write_pos.load(std::memory_order_acquire);
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace incise::preload {

// "INCPRLD1": a memfd that is not ours (a program that closed the inherited
// descriptor and opened another file under its number) fails this check.
constexpr uint64_t kAreaMagic = 0x31444c5250434e49ull;
constexpr uint32_t kLayoutVersion = 1;
constexpr uint32_t kMaxThreadRings = 256;
constexpr uint32_t kRecordsPerRing = 32768;  // a power of two: 1.25 MiB a ring
// "FD:TOKEN" (decimal descriptor, hex token): what the library looks for.
constexpr const char* kRingsVariable = "INCISE_PRELOAD_RINGS";

enum class RecordType : uint16_t {
  kAcquire = 1,    // a lock call that took the lock: request = call, time = return
  kTryFailed = 2,  // a trylock that did not: request = call, time = return
  kRelease = 3,    // an unlock call: time = the call
};

// Lock kinds, as format::LockKind numbers them (the recorder static_asserts it).
enum class RecordKind : uint16_t { kMutex = 1, kRwlockRead = 2, kRwlockWrite = 3, kSpin = 4 };

struct Record {
  uint64_t time;     // CLOCK_MONOTONIC ns, the clock of bpf_ktime_get_ns
  uint64_t request;  // kAcquire, kTryFailed: when the call began
  uint64_t address;  // the lock object
  uint64_t site;     // the call's return address, in the caller
  uint16_t type;     // RecordType
  uint16_t kind;     // RecordKind
  uint32_t reserved;
};
static_assert(sizeof(Record) == 40);

enum class RingState : uint32_t {
  kFree = 0,
  kOwned = 1,   // a thread writes it
  kExited = 2,  // its thread exited: the recorder drains it, then frees it
};

struct alignas(64) RingHeader {
  std::atomic<uint32_t> state;  // RingState
  uint32_t pid;
  uint32_t tid;
  uint32_t reserved;
  // Non-zero while the thread is inside a lock call: when it began. A futex
  // wait the scheduler source sees belongs to that call (the recorder joins
  // them, recorder/sources/preload_sections.h).
  std::atomic<uint64_t> call_request;
  std::atomic<uint64_t> lost;  // records the full ring refused
  alignas(64) std::atomic<uint64_t> write_pos;
  alignas(64) std::atomic<uint64_t> read_pos;
};

struct ThreadRing {
  RingHeader header;
  Record records[kRecordsPerRing];
};

struct alignas(64) AreaHeader {
  uint64_t magic;
  uint64_t token;  // random, from the recorder; the library compares it with the variable's
  uint32_t version;
  uint32_t ring_count;
  uint32_t records_per_ring;
  uint32_t reserved;
  // Records of threads that found every ring taken, or that a signal handler
  // made while its thread was writing one.
  std::atomic<uint64_t> lost_without_ring;
};

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

constexpr size_t areaBytes(uint32_t ring_count) {
  return sizeof(AreaHeader) + size_t{ring_count} * sizeof(ThreadRing);
}

inline ThreadRing* ringAt(AreaHeader* area, uint32_t index) {
  return reinterpret_cast<ThreadRing*>(reinterpret_cast<char*>(area) + sizeof(AreaHeader) +
                                       size_t{index} * sizeof(ThreadRing));
}

}  // namespace incise::preload
