// The tables behind kindSpec(): built once from the X-macro list in
// event_kinds.h, so names and docs can never drift from the row structs.
#include "format/event_kinds.h"

#include <string>
#include <vector>

namespace incise::format {
namespace {

#define INCISE_COLUMN_SPEC(field, encoding, doc) ColumnSpec{#field, Encoding::encoding, doc},
#define INCISE_X(enumerator, id, Struct, COLUMNS, doc) \
  constexpr ColumnSpec k##Struct##Columns[] = {COLUMNS(INCISE_COLUMN_SPEC)};
INCISE_EVENT_KINDS(INCISE_X)
#undef INCISE_X
#undef INCISE_COLUMN_SPEC

// "kCpuSample" -> "cpu_sample".
std::string snakeName(std::string_view enumerator) {
  std::string out;
  for (size_t i = 1; i < enumerator.size(); ++i) {
    char c = enumerator[i];
    if (c >= 'A' && c <= 'Z') {
      if (!out.empty()) out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

struct KindTable {
  std::vector<std::string> names;
  std::vector<KindSpec> specs;
  KindTable() {
    names.reserve(kAllEventKinds.size());
#define INCISE_X(enumerator, id, Struct, COLUMNS, doc)                                   \
  names.push_back(snakeName(#enumerator));                                               \
  specs.push_back(KindSpec{EventKind::enumerator, names.back(), doc, k##Struct##Columns, \
                           static_cast<uint16_t>(std::size(k##Struct##Columns))});
    INCISE_EVENT_KINDS(INCISE_X)
#undef INCISE_X
  }
};

const KindTable& table() {
  static const KindTable t;
  return t;
}

}  // namespace

const KindSpec* kindSpec(EventKind kind) {
  for (const auto& spec : table().specs) {
    if (spec.kind == kind) return &spec;
  }
  return nullptr;
}

std::optional<uint16_t> baseColumn(uint8_t kind, uint16_t column) {
  struct Base {
    EventKind kind;
    uint16_t column;
    uint16_t base;
  };
  auto base = [](EventKind kind, auto column, auto of) {
    return Base{kind, static_cast<uint16_t>(column), static_cast<uint16_t>(of)};
  };
  static const Base kBases[] = {
      base(EventKind::kCpuSample, CpuSampleColumn::pid, CpuSampleColumn::tid),
      base(EventKind::kSchedSwitch, SchedSwitchColumn::prev_pid, SchedSwitchColumn::prev_tid),
      base(EventKind::kSchedSwitch, SchedSwitchColumn::next_pid, SchedSwitchColumn::next_tid),
      base(EventKind::kWakeup, WakeupColumn::waker_pid, WakeupColumn::waker_tid),
      base(EventKind::kWakeup, WakeupColumn::wakee_pid, WakeupColumn::wakee_tid),
      base(EventKind::kLock, LockIntervalColumn::pid, LockIntervalColumn::tid),
      base(EventKind::kLock, LockIntervalColumn::acquired_time, LockIntervalColumn::time),
      base(EventKind::kPageFault, PageFaultColumn::pid, PageFaultColumn::tid),
      base(EventKind::kLatency, LatencyColumn::pid, LatencyColumn::tid),
      base(EventKind::kBlockSummary, BlockSummaryColumn::pid, BlockSummaryColumn::tid),
      base(EventKind::kBlockSummary, BlockSummaryColumn::end_time, BlockSummaryColumn::time),
      base(EventKind::kContextChange, ContextChangeColumn::pid, ContextChangeColumn::tid),
      base(EventKind::kAlloc, AllocationColumn::pid, AllocationColumn::tid),
      base(EventKind::kFree, FreeColumn::pid, FreeColumn::tid),
      base(EventKind::kWaitSummary, WaitSummaryColumn::pid, WaitSummaryColumn::tid),
      base(EventKind::kWaitSummary, WaitSummaryColumn::end_time, WaitSummaryColumn::time),
  };
  for (const Base& b : kBases) {
    if (static_cast<uint8_t>(b.kind) == kind && b.column == column) return b.base;
  }
  return std::nullopt;
}

const KindSpec* kindSpecByName(std::string_view name) {
  for (const auto& spec : table().specs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::string_view kindName(EventKind kind) {
  const KindSpec* spec = kindSpec(kind);
  return spec ? spec->name : std::string_view("unknown");
}

std::string_view lockKindName(uint64_t kind) {
  switch (static_cast<LockKind>(kind)) {
    case LockKind::kMutex:
      return "mutex";
    case LockKind::kRwlockRead:
      return "rwlock-read";
    case LockKind::kRwlockWrite:
      return "rwlock-write";
    case LockKind::kSpin:
      return "spin";
    case LockKind::kCustom:
      return "custom";
    case LockKind::kFutex:
      return "futex";
    case LockKind::kCondvar:
      return "condvar";
  }
  return "unknown";
}

std::string_view waitObjectName(uint64_t object) {
  switch (static_cast<WaitObject>(object)) {
    case WaitObject::kUnknown:
      return "unknown";
    case WaitObject::kMutex:
      return "mutex";
    case WaitObject::kRwlockReaders:
      return "rwlock-readers";
    case WaitObject::kRwlockWritePhase:
      return "rwlock-write-phase";
    case WaitObject::kRwlockWriters:
      return "rwlock-writers";
    case WaitObject::kCondvarGroup0:
      return "condvar-group-0";
    case WaitObject::kCondvarGroup1:
      return "condvar-group-1";
    case WaitObject::kSemaphore:
      return "semaphore";
    case WaitObject::kThread:
      return "thread";
    case WaitObject::kPiMutex:
      return "pi-mutex";
    case WaitObject::kInternalLock:
      return "internal-lock";
  }
  return "unknown";
}

uint64_t waitObjectWordOffset(uint64_t object) {
  switch (static_cast<WaitObject>(object)) {
    case WaitObject::kRwlockWritePhase:
      return 8;
    case WaitObject::kRwlockWriters:
      return 12;
    case WaitObject::kCondvarGroup0:
      return 40;
    case WaitObject::kCondvarGroup1:
      return 44;
    default:
      return 0;
  }
}

bool waitObjectMayHaveHolder(uint64_t object) {
  switch (static_cast<WaitObject>(object)) {
    case WaitObject::kCondvarGroup0:
    case WaitObject::kCondvarGroup1:
    case WaitObject::kSemaphore:
    case WaitObject::kThread:
      return false;
    default:
      return true;
  }
}

std::string_view holderStateName(uint64_t state) {
  switch (static_cast<HolderState>(state)) {
    case HolderState::kUnknown:
      return "unknown";
    case HolderState::kRunning:
      return "running";
    case HolderState::kRunnable:
      return "runnable";
    case HolderState::kSleeping:
      return "sleeping";
    case HolderState::kDiskSleep:
      return "disk-sleep";
    case HolderState::kOther:
      return "other";
  }
  return "unknown";
}

std::string_view lostSourceName(uint64_t source) {
  switch (static_cast<LostSource>(source)) {
    case LostSource::kCpuSamples:
      return "cpu-samples";
    case LostSource::kSched:
      return "sched";
    case LostSource::kLocks:
      return "locks";
    case LostSource::kPageFaults:
      return "page-faults";
    case LostSource::kProcess:
      return "process";
    case LostSource::kRecorder:
      return "recorder";
    case LostSource::kLatency:
      return "latency";
    case LostSource::kContext:
      return "context";
    case LostSource::kContextReads:
      return "context-reads";
    case LostSource::kAlloc:
      return "alloc";
  }
  return "unknown";
}

std::string_view latencySourceName(uint64_t source) {
  switch (static_cast<LatencySource>(source)) {
    case LatencySource::kFunction:
      return "function";
    case LatencySource::kSyscall:
      return "syscall";
    case LatencySource::kBlockIo:
      return "block-io";
    case LatencySource::kIoUring:
      return "io_uring";
  }
  return "unknown";
}

std::string_view blockOpName(uint64_t op) {
  switch (op) {
    case 0:
      return "read";
    case 1:
      return "write";
    case 2:
      return "flush";
    case 3:
      return "discard";
    case 5:
      return "secure-erase";
    case 9:
      return "write-zeroes";
  }
  return "other";
}

}  // namespace incise::format
