#include "analyzer/analyses/locks/wait_kind.h"

namespace incise::analyzer {
namespace {

using format::LockFlags;
using format::LockKind;
using format::WaitObject;

// The futex commands (include/uapi/linux/futex.h) the rules look at.
constexpr uint64_t kFutexWait = 0;
constexpr uint64_t kFutexLockPi = 6;
constexpr uint64_t kFutexWaitRequeuePi = 11;
constexpr uint64_t kFutexLockPi2 = 13;
constexpr uint64_t kFutexCommandMask = 0x7f;  // without PRIVATE (128) and CLOCK_REALTIME (256)
// glibc's low-level lock: 0 free, 1 taken, 2 taken with waiters; a waiter
// sleeps while the word is 2 (nptl/lowlevellock.c).
constexpr uint64_t kLowLevelLockContended = 2;

bool has(uint64_t flags, LockFlags flag) {
  return (flags & flag) != 0;
}

// "pthread_cond_wait@@GLIBC_2.3.2" and "f(int)" -> "pthread_cond_wait", "f".
std::string_view bareName(std::string_view name) {
  size_t end = name.find_first_of("@(");
  return end == std::string_view::npos ? name : name.substr(0, end);
}

bool startsWith(std::string_view name, std::string_view prefix) {
  return name.substr(0, prefix.size()) == prefix;
}

// "runtime.futex.abi0" -> "runtime.futex": Go names its assembly functions
// with the ABI they follow; the function is the same.
std::string_view withoutGoAbi(std::string_view name) {
  for (std::string_view suffix : {".abi0", ".abiinternal"}) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix)
      return name.substr(0, name.size() - suffix.size());
  }
  return name;
}

// The C library function a wait entered through, by name. glibc spells its
// internal and versioned entry points with one to three leading underscores.
std::optional<WaitKind> libcEntryKind(std::string_view name) {
  name = bareName(name);
  while (startsWith(name, "_")) name.remove_prefix(1);
  struct Prefix {
    std::string_view prefix;
    WaitKind kind;
  };
  static constexpr Prefix kPrefixes[] = {
      {"lll_lock_wait", WaitKind::kMutex},     {"lll_clocklock_wait", WaitKind::kMutex},
      {"pthread_mutex_", WaitKind::kMutex},    {"futex_lock_pi", WaitKind::kMutex},
      {"pthread_rwlock_", WaitKind::kRwlock},  {"pthread_cond_", WaitKind::kCondvar},
      {"condvar_", WaitKind::kCondvar},        {"new_sem_wait", WaitKind::kSemaphore},
      {"sem_wait", WaitKind::kSemaphore},      {"sem_timedwait", WaitKind::kSemaphore},
      {"sem_clockwait", WaitKind::kSemaphore}, {"do_futex_wait", WaitKind::kSemaphore},
      {"pthread_join", WaitKind::kJoin},       {"pthread_clockjoin", WaitKind::kJoin},
      {"pthread_timedjoin", WaitKind::kJoin},  {"pthread_tryjoin", WaitKind::kJoin},
      {"pthread_spin_", WaitKind::kSpin},
  };
  for (const Prefix& p : kPrefixes) {
    if (startsWith(name, p.prefix)) return p.kind;
  }
  return std::nullopt;
}

// Runtime functions that say what a wait is even though it waits through a
// generic primitive. `specific`: decides by itself; the others only when no
// specific one is on the stack (they serve several purposes).
struct RuntimeName {
  std::string_view name;
  WaitKind kind;
  bool specific;
};
constexpr RuntimeName kRuntimeNames[] = {
    // Go (runtime/lock_futex.go, proc.go): M parking, and the runtime's own mutex.
    {"runtime.lock2", WaitKind::kMutex, true},
    {"runtime.notesleep", WaitKind::kPark, true},
    {"runtime.notetsleep", WaitKind::kPark, true},
    {"runtime.notetsleepg", WaitKind::kPark, true},
    {"runtime.notetsleep_internal", WaitKind::kPark, true},
    {"runtime.mPark", WaitKind::kPark, true},
    {"runtime.stopm", WaitKind::kPark, true},
    {"runtime.futexsleep", WaitKind::kPark, false},
    {"runtime.futex", WaitKind::kPark, false},
    // HotSpot: LockSupport.park, contended monitors, Object.wait.
    {"Parker::park", WaitKind::kPark, true},
    {"Unsafe_Park", WaitKind::kPark, true},
    {"ObjectMonitor::EnterI", WaitKind::kMutex, true},
    {"ObjectMonitor::enter", WaitKind::kMutex, true},
    {"ObjectMonitor::wait", WaitKind::kCondvar, true},
    {"os::PlatformEvent::park", WaitKind::kPark, false},
};

std::optional<WaitKind> probedKind(uint64_t lock_kind) {
  switch (static_cast<LockKind>(lock_kind)) {
    case LockKind::kMutex:
      return WaitKind::kMutex;
    case LockKind::kRwlockRead:
    case LockKind::kRwlockWrite:
      return WaitKind::kRwlock;
    case LockKind::kSpin:
      return WaitKind::kSpin;
    case LockKind::kCustom:
      return WaitKind::kCustom;
    case LockKind::kCondvar:
      return WaitKind::kCondvar;
    case LockKind::kFutex:
      break;
  }
  return std::nullopt;
}

}  // namespace

std::string_view waitKindName(WaitKind kind) {
  switch (kind) {
    case WaitKind::kMutex:
      return "mutex";
    case WaitKind::kRwlock:
      return "rwlock";
    case WaitKind::kSpin:
      return "spin";
    case WaitKind::kCustom:
      return "custom";
    case WaitKind::kCondvar:
      return "condvar";
    case WaitKind::kSemaphore:
      return "semaphore";
    case WaitKind::kJoin:
      return "join";
    case WaitKind::kPark:
      return "park";
    case WaitKind::kFutex:
      return "futex";
  }
  return "futex";
}

std::optional<WaitKind> waitKindByName(std::string_view name) {
  for (WaitKind kind : kAllWaitKinds) {
    if (waitKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

bool isLockKind(WaitKind kind) {
  return kind == WaitKind::kMutex || kind == WaitKind::kRwlock || kind == WaitKind::kSpin ||
         kind == WaitKind::kCustom;
}

format::LockKind recordedLockKind(WaitKind kind) {
  switch (kind) {
    case WaitKind::kMutex:
      return LockKind::kMutex;
    case WaitKind::kRwlock:
      return LockKind::kRwlockWrite;
    case WaitKind::kSpin:
      return LockKind::kSpin;
    case WaitKind::kCustom:
      return LockKind::kCustom;
    case WaitKind::kCondvar:
    case WaitKind::kSemaphore:
    case WaitKind::kJoin:
    case WaitKind::kPark:
    case WaitKind::kFutex:
      break;
  }
  return LockKind::kFutex;
}

std::string_view holdSourceName(HoldSource source) {
  switch (source) {
    case HoldSource::kExact:
      return "exact";
    case HoldSource::kInferred:
      return "inferred";
    case HoldSource::kNone:
      break;
  }
  return "none";
}

WaitFrames waitFramesOf(std::span<const NamedFrame> frames) {
  WaitFrames result;
  std::optional<WaitKind> generic_runtime;
  for (const NamedFrame& frame : frames) {
    std::string_view name = bareName(frame.name);
    if (frame.in_c_library && !result.libc_entry) result.libc_entry = libcEntryKind(name);
    if (result.runtime) continue;
    std::string_view function = withoutGoAbi(name);
    for (const RuntimeName& known : kRuntimeNames) {
      if (function != known.name) continue;
      if (known.specific) {
        result.runtime = known.kind;
      } else if (!generic_runtime) {
        generic_runtime = known.kind;
      }
      break;
    }
  }
  if (!result.runtime) result.runtime = generic_runtime;
  return result;
}

WaitClass classifyWait(const format::LockInterval& row, const WaitFrames& frames) {
  WaitClass c;
  c.object = row.address;
  // 1. A probed lock call says what it is; mode `all` read the owner when
  // the call blocked, and saw the unlocks, so both are known exactly.
  if (std::optional<WaitKind> probed = probedKind(row.lock_kind)) {
    c.kind = *probed;
    c.rule = "probed call";
    // The owner read when the call blocked; else the last unlocker.
    c.holder_tid = row.holder_tid != 0 ? row.holder_tid : row.releaser_tid;
    c.holder_source = c.holder_tid != 0 ? HoldSource::kExact : HoldSource::kNone;
    return c;
  }

  // 2-5. A futex wait.
  bool facts = has(row.flags, format::kLockFutexFacts);
  auto object = static_cast<WaitObject>(row.object);
  if (facts) {
    uint64_t offset = format::waitObjectWordOffset(row.object);
    if (row.address >= offset) c.object = row.address - offset;
  }
  uint64_t command = row.futex_op & kFutexCommandMask;
  if (frames.runtime) {
    c.kind = *frames.runtime;
    c.rule = "runtime frame";
  } else if (facts && object != WaitObject::kUnknown) {
    c.rule = "object layout";
    switch (object) {
      case WaitObject::kMutex:
      case WaitObject::kPiMutex:
      case WaitObject::kInternalLock:
        c.kind = WaitKind::kMutex;
        break;
      case WaitObject::kRwlockReaders:
      case WaitObject::kRwlockWritePhase:
      case WaitObject::kRwlockWriters:
        c.kind = WaitKind::kRwlock;
        break;
      case WaitObject::kCondvarGroup0:
      case WaitObject::kCondvarGroup1:
        c.kind = WaitKind::kCondvar;
        break;
      case WaitObject::kSemaphore:
        c.kind = WaitKind::kSemaphore;
        break;
      case WaitObject::kThread:
        c.kind = WaitKind::kJoin;
        break;
      case WaitObject::kUnknown:
        break;
    }
  } else if (facts && (command == kFutexLockPi || command == kFutexLockPi2)) {
    c.kind = WaitKind::kMutex;
    c.rule = "futex op lock-pi";
  } else if (facts && command == kFutexWaitRequeuePi) {
    c.kind = WaitKind::kCondvar;
    c.rule = "futex op wait-requeue-pi";
  } else if (frames.libc_entry) {
    c.kind = *frames.libc_entry;
    c.rule = "entry point";
  } else if (facts && command == kFutexWait && row.futex_value == kLowLevelLockContended) {
    c.kind = WaitKind::kMutex;
    c.rule = "low-level lock value";
  } else {
    c.kind = WaitKind::kFutex;
    c.rule = "unknown futex";
  }

  // Holders. Read from the lock (or the joined thread): exact. Otherwise
  // the waker: inferred for a lock (another thread may have held it before),
  // the cause itself for an event wait when the recorder saw it wake this
  // waiter (format 2.2), inferred from the address's last wake before that.
  if (row.holder_tid != 0) {
    c.holder_tid = row.holder_tid;
    c.holder_source = HoldSource::kExact;
  } else if (c.kind == WaitKind::kJoin && object == WaitObject::kThread) {
    c.holder_tid = row.futex_value;
    c.holder_source = HoldSource::kExact;
  } else if (row.releaser_tid != 0 && row.releaser_tid != row.tid) {
    c.holder_tid = row.releaser_tid;
    c.holder_source = !isLockKind(c.kind) && facts ? HoldSource::kExact : HoldSource::kInferred;
  }
  return c;
}

}  // namespace incise::analyzer
