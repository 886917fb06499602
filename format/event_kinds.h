// The event model, declared once.
//
// Each event kind is a table of typed columns; this X-macro list is the only
// place a kind or column is named. From it come the row structs
// (format::CpuSample, ...), the column numbers the file stores, their
// encodings, and the docs printed by `incise info` and `incise dump`.
// Ids are frozen on disk: add kinds and columns at the end, never renumber.
//
//   format::CpuSample s{.time = t, .cpu = 1, .pid = 42, .tid = 43, .stack_id = id, .weight = 1};
//   writer.append(s);
//   ...
//   for (size_t i = 0; i < chunk.rows(); ++i) use(chunk.row<format::CpuSample>(i));
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace incise::format {

// How a column's uint64 values are turned into bytes before compression.
// Values are frozen on disk.
enum class Encoding : uint8_t {
  kVarint = 1,       // unsigned LEB128: small ids, counts, enums
  kDeltaVarint = 2,  // zigzag(v[i] - v[i-1]) as LEB128: timestamps, addresses that repeat
  kFixed64 = 3,      // little-endian 8 bytes: values with no structure (hashes)
  // A byte blob per row (format 1.1). The row struct's field holds the blob's
  // length; the bytes come from Writer::append(row, bytes) and are read back
  // with Chunk::bytes(column, row). Stored as every row's length (LEB128),
  // then all blobs concatenated: see format/codecs/byte_blob_codec.h.
  kBytes = 4,
  // Format 2.0. Every value of the column the same: stored once (a varint).
  // The chunk encoder picks it for such a column whatever its declared
  // encoding; a kBytes column only when every blob is empty.
  kConstant = 5,
  // Format 2.0. Differences as a multiple of a period plus a remainder, the
  // remainders in byte planes: sampling times (see period_delta_codec.cc).
  kPeriodDelta = 6,
  // Format 2.9. zigzag(v - base) as LEB128, where base is the same row's
  // value of the column baseColumn() names: a pid stored against its tid (0
  // for a process's main thread), a wait's end against its start. Chosen by
  // the chunk encoder for the columns that have a base; the reader decodes
  // the base with them.
  kBaseDelta = 7,
};

// Frozen on disk.
enum class Compression : uint8_t {
  kNone = 0,
  kZstd = 1,
};

// X(kind enumerator, id, row struct, columns macro, doc)
// column macro entries: C(field, encoding, doc)

#define INCISE_CPU_SAMPLE_COLUMNS(C)                                                            \
  C(time, kPeriodDelta, "sample time, ns in the header's clock")                                \
  C(cpu, kVarint, "cpu the sample was taken on")                                                \
  C(pid, kVarint, "process id (tgid)")                                                          \
  C(tid, kVarint, "thread id")                                                                  \
  C(stack_id, kVarint, "interned kernel+user stack, leaf first; 0 = none")                      \
  C(weight, kVarint, "period: ns of cpu-clock (or events) this sample stands for")              \
  C(user_ip, kDeltaVarint, "-g dwarf/hybrid: user ip at the sample; 0 = none (format 1.1)")     \
  C(user_sp, kDeltaVarint, "-g dwarf/hybrid: user stack pointer")                               \
  C(user_bp, kDeltaVarint, "-g dwarf/hybrid: user frame pointer (rbp)")                         \
  C(user_stack, kBytes, "-g dwarf/hybrid: bytes copied from user_sp up; field = length")        \
  C(goid, kVarint, "Go programs: the goroutine running; 0 = none or not Go (2.4)")              \
  C(counter0, kVarint, "--counters: the first counter's count since the previous sample (2.9)") \
  C(counter1, kVarint, "--counters: the second counter's, as counter0 (2.9)")                   \
  C(counter2, kVarint, "--counters: the third counter's (2.9)")                                 \
  C(counter3, kVarint, "--counters: the fourth counter's (2.9)")

#define INCISE_SCHED_SWITCH_COLUMNS(C)                                                 \
  C(time, kDeltaVarint, "switch time, ns")                                             \
  C(cpu, kVarint, "cpu")                                                               \
  C(prev_pid, kVarint, "process of the thread leaving the cpu")                        \
  C(prev_tid, kVarint, "thread leaving the cpu")                                       \
  C(prev_state, kVarint, "0 = preempted (still runnable), else the kernel task state") \
  C(next_pid, kVarint, "process of the thread taking the cpu")                         \
  C(next_tid, kVarint, "thread taking the cpu")                                        \
  C(stack_id, kVarint, "off-CPU stack of prev at the switch; 0 = none")                \
  C(goid, kVarint, "Go programs: the goroutine prev's thread ran; 0 = none (2.5)")     \
  C(next_goid, kVarint, "Go programs: the goroutine next's thread resumes (2.5)")      \
  C(elided, kVarint, "halves of a summarised short sleep, SwitchElided bits; 0 = none (2.7)")

#define INCISE_WAKEUP_COLUMNS(C)                                \
  C(time, kDeltaVarint, "wake-up time, ns")                     \
  C(cpu, kVarint, "cpu the waker ran on")                       \
  C(target_cpu, kVarint, "cpu the wakee last ran on")           \
  C(waker_pid, kVarint, "waking process; 0 = interrupt/kernel") \
  C(waker_tid, kVarint, "waking thread")                        \
  C(wakee_pid, kVarint, "woken process")                        \
  C(wakee_tid, kVarint, "woken thread")                         \
  C(stack_id, kVarint, "waker's stack; 0 = none")

#define INCISE_LOCK_COLUMNS(C)                                                              \
  C(time, kDeltaVarint, "request time (call or wait start), ns")                            \
  C(acquired_time, kDeltaVarint, "lock acquired (or wait ended), ns")                       \
  C(release_time, kDeltaVarint, "lock released, ns; 0 = not seen (contended mode)")         \
  C(pid, kVarint, "process")                                                                \
  C(tid, kVarint, "acquiring thread")                                                       \
  C(address, kDeltaVarint, "lock address (futex word) in the process")                      \
  C(lock_kind, kVarint, "format::LockKind")                                                 \
  C(flags, kVarint, "format::LockFlags bits")                                               \
  C(stack_id, kVarint, "stack at acquire (or at the wait); 0 = none")                       \
  C(releaser_tid, kVarint, "thread that released the lock to this waiter; 0 = unknown")     \
  C(futex_op, kVarint, "kLockFutexFacts: the wait's futex op, with its flag bits (2.2)")    \
  C(futex_value, kVarint, "kLockFutexFacts: the value the futex wait expected (2.2)")       \
  C(object, kVarint, "format::WaitObject: what the memory at the address is (2.2)")         \
  C(holder_tid, kVarint, "owner read from the lock itself at the wait; 0 = unknown (2.2)")  \
  C(holder_state, kVarint, "format::HolderState of holder_tid at the wait's start (2.2)")   \
  C(releaser_stack_id, kVarint, "stack of the thread that woke the waiter; 0 = none (2.2)") \
  C(goid, kVarint, "Go: the waiting goroutine (futex waits: its thread's, 2.5); 0 = none")  \
  C(releaser_goid, kVarint, "Go mutex waits: the goroutine whose unlock released it (2.3)")

#define INCISE_PAGE_FAULT_COLUMNS(C)                \
  C(time, kDeltaVarint, "fault time, ns")           \
  C(cpu, kVarint, "cpu")                            \
  C(pid, kVarint, "process")                        \
  C(tid, kVarint, "thread")                         \
  C(address, kDeltaVarint, "faulting data address") \
  C(stack_id, kVarint, "stack at the fault; 0 = none")

#define INCISE_PROCESS_EVENT_COLUMNS(C)                                 \
  C(time, kDeltaVarint, "ns")                                           \
  C(event, kVarint, "format::ProcessEventType")                         \
  C(pid, kVarint, "process the event happened to")                      \
  C(tid, kVarint, "thread the event happened to")                       \
  C(peer_pid, kVarint, "fork: child pid; exit: exit code; otherwise 0") \
  C(peer_tid, kVarint, "fork: child tid; otherwise 0")

#define INCISE_LOST_COLUMNS(C)                           \
  C(time, kDeltaVarint, "when the loss was noticed, ns") \
  C(source, kVarint, "format::LostSource")               \
  C(count, kVarint, "events the kernel dropped")

// Format 2.3: one timed call, syscall or I/O (--trace, --syscalls,
// --block-io, --io-uring). `probe` is named by the metadata's latency probes.
#define INCISE_LATENCY_COLUMNS(C)                                                           \
  C(time, kDeltaVarint, "start: call entry, syscall entry, I/O issue or submission, ns")    \
  C(duration, kVarint, "ns from the start to the return, exit or completion")               \
  C(cpu, kVarint, "cpu at the start")                                                       \
  C(pid, kVarint, "process charged (the caller; the thread that issued or submitted I/O)")  \
  C(tid, kVarint, "thread charged")                                                         \
  C(source, kVarint, "format::LatencySource")                                               \
  C(probe, kVarint, "function id, syscall number, block device (dev_t) or io_uring opcode") \
  C(stack_id, kVarint, "stack at the start; 0 = none")                                      \
  C(weight, kVarint, "calls the row stands for: 1, or N with --sample N")                   \
  C(bytes, kVarint, "block I/O bytes; syscall or io_uring result when not negative")        \
  C(error, kVarint, "errno of a negative syscall or io_uring result; block I/O status")     \
  C(detail, kVarint, "block I/O: the operation (format::BlockOp); otherwise 0")

// Format 2.3: --aggregate. Calls of one (process, probe, stack) counted in BPF
// per log2 bucket of their duration over [time, end_time).
#define INCISE_LATENCY_HISTOGRAM_COLUMNS(C)                                             \
  C(time, kDeltaVarint, "start of the interval the counts cover, ns")                   \
  C(end_time, kDeltaVarint, "end of that interval, ns")                                 \
  C(pid, kVarint, "process")                                                            \
  C(source, kVarint, "format::LatencySource")                                           \
  C(probe, kVarint, "as in latency rows")                                               \
  C(stack_id, kVarint, "stack at the start; 0 = none")                                  \
  C(bucket, kVarint, "durations in [2^bucket, 2^(bucket+1)) ns; bucket 0 also holds 0") \
  C(count, kVarint, "calls counted (times weight: the calls they stand for)")           \
  C(total_ns, kVarint, "sum of their durations")                                        \
  C(max_ns, kVarint, "the longest of them")                                             \
  C(weight, kVarint, "calls each counted call stands for: 1, or N with --sample N")

// Format 2.4: --sched-min-block. Off-CPU intervals of one target thread
// shorter than the threshold whose switch and wake-up rows were not written,
// counted per (thread, state at switch-out, off-CPU stack) over [time,
// end_time]: the first block's switch-out to the last one's switch-in.
#define INCISE_BLOCK_SUMMARY_COLUMNS(C)                                                 \
  C(time, kDeltaVarint, "switch-out of the first block counted, ns")                    \
  C(end_time, kDeltaVarint, "switch-in of the last block counted, ns")                  \
  C(pid, kVarint, "process")                                                            \
  C(tid, kVarint, "thread")                                                             \
  C(prev_state, kVarint, "the switch-outs' prev_state (0 = preempted, still runnable)") \
  C(stack_id, kVarint, "off-CPU stack the switch-outs carried; 0 = none")               \
  C(count, kVarint, "blocks counted")                                                   \
  C(total_ns, kVarint, "their summed off-CPU time, switch-out to switch-in")            \
  C(max_ns, kVarint, "the longest of them")                                             \
  C(wakeups, kVarint, "wake-up rows of these blocks not written")

// Format 2.8: --context. A thread's context value (a thread-local variable
// of the program, RecordOptions::contexts[slot]) read at its events, written
// only when it differs from the thread's previous read: the value holds from
// this row until the thread's next row of the slot. It changed after `since`
// (the thread's last read of the previous value) and by `time`.
#define INCISE_CONTEXT_CHANGE_COLUMNS(C)                                            \
  C(time, kDeltaVarint, "the first read that saw the value, ns")                    \
  C(pid, kVarint, "process")                                                        \
  C(tid, kVarint, "thread")                                                         \
  C(slot, kVarint, "which context: the header's contexts, in command-line order")   \
  C(value, kDeltaVarint, "the value read")                                          \
  C(since, kDeltaVarint, "the last read that saw the previous value; 0 = none, ns") \
  C(value_high, kVarint, "otel trace_id: the id's first 8 bytes (value: its last); 0 = none (2.11)")

// Format 2.9: a release seen without its acquisition: a Go program's
// sync.Mutex unlock that took the slow path (unlockSlow: some goroutine
// waited or spun). The lock rows of its lockSlow calls carry
// kLockGoSlowPath; together they give the holds while others waited
// (analyzer/analyses/locks/go_mutex_holds.h).
#define INCISE_LOCK_RELEASE_COLUMNS(C)                           \
  C(time, kDeltaVarint, "the release: unlockSlow's entry, ns")   \
  C(pid, kVarint, "process")                                     \
  C(tid, kVarint, "releasing thread")                            \
  C(address, kDeltaVarint, "the lock (the *sync.Mutex)")         \
  C(lock_kind, kVarint, "format::LockKind")                      \
  C(goid, kVarint, "Go: the releasing goroutine; 0 = not known") \
  C(stack_id, kVarint, "stack at the release; 0 = none")         \
  C(return_time, kDeltaVarint, "unlockSlow's return: the releaser is past it, ns")

// Format 2.10: --alloc. An allocation sampled in process (Poisson, one
// sample every N bytes on average: libincise-preload.so), and the free of a
// sampled block. `weight` is the bytes the sample stands for:
// size / (1 - exp(-size / N)), about N for a small block, the size for a
// block far larger than N; weight / size estimates the allocations.
#define INCISE_ALLOC_COLUMNS(C)                                                   \
  C(time, kDeltaVarint, "the allocation returned, ns")                            \
  C(pid, kVarint, "process")                                                      \
  C(tid, kVarint, "allocating thread")                                            \
  C(address, kDeltaVarint, "the block")                                           \
  C(size, kVarint, "bytes asked for")                                             \
  C(weight, kVarint, "bytes of the program's allocations this sample stands for") \
  C(stack_id, kVarint, "stack at the allocation, its caller first; 0 = none")

#define INCISE_FREE_COLUMNS(C)                                  \
  C(time, kDeltaVarint, "the free (or munmap, or realloc), ns") \
  C(pid, kVarint, "process")                                    \
  C(tid, kVarint, "freeing thread")                             \
  C(address, kDeltaVarint, "the sampled block freed")

// Format 2.12: --sched-min-block. Futex waits on a condvar or a semaphore
// shorter than the threshold whose lock rows were not written, counted per
// (thread, futex word, wait stack, waker, waker's stack, log2 bucket of the
// wait) over [time, end_time], an interval of at most about a second that
// every wait counted lies in (the rows of one interval share it). Only waits
// with no holder to name: a wait on a lock keeps its row.
#define INCISE_WAIT_SUMMARY_COLUMNS(C)                                                 \
  C(time, kDeltaVarint, "start of the interval the counts cover, ns")                  \
  C(end_time, kDeltaVarint, "end of that interval, ns")                                \
  C(pid, kVarint, "process")                                                           \
  C(tid, kVarint, "waiting thread")                                                    \
  C(address, kDeltaVarint, "the futex word, as in lock rows")                          \
  C(object, kVarint, "format::WaitObject: a condvar's group word or a semaphore")      \
  C(stack_id, kVarint, "stack at the waits; 0 = none")                                 \
  C(releaser_tid, kVarint, "thread that woke them (posting, signalling); 0 = unknown") \
  C(releaser_stack_id, kVarint, "that thread's stack as it woke them; 0 = none")       \
  C(bucket, kVarint, "waits in [2^bucket, 2^(bucket+1)) ns; bucket 0 also holds 0")    \
  C(count, kVarint, "waits counted")                                                   \
  C(total_ns, kVarint, "their summed wait time, block to switch-in")                   \
  C(max_ns, kVarint, "the longest of them")

#define INCISE_EVENT_KINDS(X)                                                        \
  X(kCpuSample, 1, CpuSample, INCISE_CPU_SAMPLE_COLUMNS, "cpu samples with stacks")  \
  X(kSchedSwitch, 2, SchedSwitch, INCISE_SCHED_SWITCH_COLUMNS, "scheduler switches") \
  X(kWakeup, 3, Wakeup, INCISE_WAKEUP_COLUMNS, "wake-ups")                           \
  X(kLock, 4, LockInterval, INCISE_LOCK_COLUMNS, "lock intervals")                   \
  X(kPageFault, 5, PageFault, INCISE_PAGE_FAULT_COLUMNS, "page faults")              \
  X(kProcessEvent, 6, ProcessEvent, INCISE_PROCESS_EVENT_COLUMNS, "fork/exec/exit")  \
  X(kLost, 7, Lost, INCISE_LOST_COLUMNS, "lost-event records")                       \
  X(kLatency, 8, Latency, INCISE_LATENCY_COLUMNS, "timed calls, syscalls and I/O")   \
  X(kLatencyHistogram, 9, LatencyHistogram, INCISE_LATENCY_HISTOGRAM_COLUMNS,        \
    "latency histograms counted in BPF (--aggregate)")                               \
  X(kBlockSummary, 10, BlockSummary, INCISE_BLOCK_SUMMARY_COLUMNS,                   \
    "short off-CPU intervals counted, not written (--sched-min-block)")              \
  X(kContextChange, 11, ContextChange, INCISE_CONTEXT_CHANGE_COLUMNS,                \
    "context values as they change (--context)")                                     \
  X(kLockRelease, 12, LockRelease, INCISE_LOCK_RELEASE_COLUMNS,                      \
    "lock releases seen without their acquisition (Go slow unlocks)")                \
  X(kAlloc, 13, Allocation, INCISE_ALLOC_COLUMNS, "sampled allocations (--alloc)")   \
  X(kFree, 14, Free, INCISE_FREE_COLUMNS, "frees of sampled blocks (--alloc)")       \
  X(kWaitSummary, 15, WaitSummary, INCISE_WAIT_SUMMARY_COLUMNS,                      \
    "short condvar and semaphore waits counted, not written (--sched-min-block)")

enum class EventKind : uint8_t {
#define INCISE_X(enumerator, id, ...) enumerator = id,
  INCISE_EVENT_KINDS(INCISE_X)
#undef INCISE_X
};

inline constexpr std::array<EventKind, 15> kAllEventKinds = {
#define INCISE_X(enumerator, ...) EventKind::enumerator,
    INCISE_EVENT_KINDS(INCISE_X)
#undef INCISE_X
};

// Row structs: every column is a uint64 on the API, narrowed only by the codec.
#define INCISE_FIELD(field, encoding, doc) uint64_t field = 0;
#define INCISE_X(enumerator, id, Struct, COLUMNS, doc)        \
  struct Struct {                                             \
    COLUMNS(INCISE_FIELD)                                     \
    static constexpr EventKind kKind = EventKind::enumerator; \
  };
INCISE_EVENT_KINDS(INCISE_X)
#undef INCISE_X
#undef INCISE_FIELD

// SchedSwitch::elided (format 2.7). A short sleep counted in a block summary
// keeps the rows its halves share with a half that is written; such a half
// is not a switch of its thread, which reads as running through the sleep.
namespace switch_elided {
// prev's switch-out begins a summarised short sleep.
inline constexpr uint64_t kPrevOut = 1;
// next's switch-in ends a summarised short sleep.
inline constexpr uint64_t kNextIn = 2;
// Switch rows of this cpu between the previous written one and this one were
// not written (every target half in them was elided): prev need not be the
// previous written row's next, and prev's switch-in may be one of them.
inline constexpr uint64_t kCpuRowsBefore = 4;
}  // namespace switch_elided

// Column numbers per kind: CpuSampleColumn::time == 0, ... in declaration order.
#define INCISE_ENUMERATOR(field, encoding, doc) field,
#define INCISE_X(enumerator, id, Struct, COLUMNS, doc) \
  enum class Struct##Column : uint16_t{COLUMNS(INCISE_ENUMERATOR) kCount};
INCISE_EVENT_KINDS(INCISE_X)
#undef INCISE_X
#undef INCISE_ENUMERATOR

struct ColumnSpec {
  std::string_view name;
  Encoding encoding;
  std::string_view doc;
};

struct KindSpec {
  EventKind kind;
  std::string_view name;  // "cpu_sample"
  std::string_view doc;
  const ColumnSpec* columns;
  uint16_t column_count;
};

// nullptr for an id this build does not know (a newer writer's kind).
const KindSpec* kindSpec(EventKind kind);
// The column a column of `kind` is stored against (Encoding::kBaseDelta):
// the thread id of a process id, the start of a wait's end. A base has no
// base of its own.
std::optional<uint16_t> baseColumn(uint8_t kind, uint16_t column);
const KindSpec* kindSpecByName(std::string_view name);
std::string_view kindName(EventKind kind);

// Value vocabularies of some columns. Frozen on disk.
enum class LockKind : uint8_t {
  kMutex = 1,
  kRwlockRead = 2,
  kRwlockWrite = 3,
  kSpin = 4,
  kCustom = 5,
  kFutex = 6,    // contended mode: a futex wait whose word is the lock
  kCondvar = 7,  // a runtime's condition wait (Go's sync.Cond.Wait; format 2.6)
};
std::string_view lockKindName(uint64_t kind);

enum LockFlags : uint64_t {
  kLockContended = 1u << 0,      // the acquire had to wait
  kLockTryFailed = 1u << 1,      // trylock that did not get the lock
  kLockContendedOnly = 1u << 2,  // recorded in contended mode: no hold time
  kLockRecursive = 1u << 3,      // a re-acquire by the holder (recursive mutex)
  // Format 2.2: a futex wait seen at its blocking context switch, with the
  // futex_op, futex_value and object columns filled in.
  kLockFutexFacts = 1u << 4,
  // Format 2.2: holder_tid was checked while recording to be a live thread of
  // the waiter's process (else the analyzer checks it against the trace).
  kLockHolderChecked = 1u << 5,
  // Format 2.2: the wait had not ended when recording stopped; acquired_time
  // is the end of the recording.
  kLockWaitUnfinished = 1u << 6,
  // Format 2.9: a Go sync.Mutex lockSlow (an acquisition that found the
  // mutex taken); the mutex's slow unlocks are lock_release rows.
  kLockGoSlowPath = 1u << 7,
};

// What the memory at a futex wait's address looked like (the `object`
// column): the recorder matches the words around it against the C library's
// layouts (glibc, x86-64). The offset of the futex word in its object follows
// from the value, so the analyzer names the object, not the word. Frozen on
// disk.
enum class WaitObject : uint8_t {
  kUnknown = 0,           // not read, or no layout matched
  kMutex = 1,             // pthread_mutex_t; the word is __lock (offset 0)
  kRwlockReaders = 2,     // pthread_rwlock_t; the word is __readers (offset 0)
  kRwlockWritePhase = 3,  // pthread_rwlock_t; __wrphase_futex (offset 8)
  kRwlockWriters = 4,     // pthread_rwlock_t; __writers_futex (offset 12)
  kCondvarGroup0 = 5,     // pthread_cond_t; __g_signals[0] (offset 40)
  kCondvarGroup1 = 6,     // pthread_cond_t; __g_signals[1] (offset 44)
  kSemaphore = 7,         // sem_t; the value word (offset 0)
  kThread = 8,            // a thread's tid word (pthread_join; the value is its tid)
  kPiMutex = 9,           // a priority-inheritance futex: the word holds the owner's tid
  kInternalLock = 10,     // a C library internal lock word (not a pthread_mutex_t)
};
std::string_view waitObjectName(uint64_t object);
// Bytes from the object's start to its futex word; 0 for kUnknown.
uint64_t waitObjectWordOffset(uint64_t object);
// Whether a wait on this object can be a wait for a thread that holds it: a
// lock (mutex, rwlock, PI or internal lock), or a word no layout matched. A
// condvar, semaphore or thread word waits for an event, not a holder.
bool waitObjectMayHaveHolder(uint64_t object);

// State of a lock's holder when a thread started to wait on it (the
// holder_state column). Frozen on disk.
enum class HolderState : uint8_t {
  kUnknown = 0,
  kRunning = 1,    // on a CPU
  kRunnable = 2,   // runnable, waiting for a CPU (preempted)
  kSleeping = 3,   // blocked, interruptible
  kDiskSleep = 4,  // blocked, uninterruptible (I/O, page-cache fault)
  kOther = 5,      // stopped, traced, exiting
};
std::string_view holderStateName(uint64_t state);

enum class ProcessEventType : uint8_t {
  kFork = 1,  // new thread or process; pid/tid = parent, peer = child
  kExec = 2,
  kExit = 3,  // thread exit; peer_pid = exit code when the whole process exits
  kComm = 4,  // renamed: the new name is in metadata (Thread)
};

enum class LostSource : uint8_t {
  kCpuSamples = 1,
  kSched = 2,
  kLocks = 3,
  kPageFaults = 4,
  kProcess = 5,
  kRecorder = 6,      // the recorder's own queue overflowed
  kLatency = 7,       // format 2.3: latency rows or histogram counts
  kContext = 8,       // format 2.8: context-change rows
  kContextReads = 9,  // format 2.8: context values that could not be read
  kAlloc = 10,        // format 2.10: sampled allocations or frees
};
std::string_view lostSourceName(uint64_t source);

// What a latency row timed (format 2.3).
enum class LatencySource : uint8_t {
  kFunction = 1,  // --trace BIN:FUNC: entry to return
  kSyscall = 2,   // --syscalls: sys_enter to sys_exit
  kBlockIo = 3,   // --block-io: block_rq_issue to block_rq_complete
  kIoUring = 4,   // --io-uring: io_uring_submit_req to io_uring_complete
};
std::string_view latencySourceName(uint64_t source);

// Block I/O operations (the kernel's REQ_OP_* values, which are ABI in
// blktrace and stable across kernels).
enum class BlockOp : uint8_t {
  kRead = 0,
  kWrite = 1,
  kFlush = 2,
  kDiscard = 3,
  kSecureErase = 5,
  kWriteZeroes = 9,
};
std::string_view blockOpName(uint64_t op);

// A stack frame address is kernel when its top bit is set (x86-64, arm64).
inline bool isKernelAddress(uint64_t address) {
  return (address >> 63) != 0;
}

}  // namespace incise::format
