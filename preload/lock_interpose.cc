// The pthread lock functions, interposed: each call is forwarded to the C
// library's definition and recorded in the calling thread's ring
// (preload/thread_ring.h). An acquire writes one record when it returns
// (request = the call, time = the return, site = the caller's return
// address); an unlock writes one when it is called. While a lock call runs,
// the ring's call_request says since when, so the recorder can give a futex
// wait seen by the scheduler program to the call it happened in. Nothing
// here allocates or takes a lock of its own; a call from a signal handler
// nested in another keeps the outer call's call_request.
#include <errno.h>
#include <pthread.h>

#include "preload/next_symbol.h"
#include "preload/thread_ring.h"

#define INCISE_EXPORT extern "C" __attribute__((visibility("default")))

namespace incise::preload {
namespace {

template <typename Lock>
int recordAcquire(int (*call)(Lock*), Lock* lock, RecordKind kind, bool is_try, void* site) {
  ThreadRing* ring = currentRing();
  if (!ring) {
    noteUnrecorded();
    return call(lock);
  }
  uint64_t request = monotonicNs();
  uint64_t outer = ring->header.call_request.load(std::memory_order_relaxed);
  ring->header.call_request.store(request, std::memory_order_release);
  int result = call(lock);
  uint64_t now = monotonicNs();
  RecordType type = result == 0 ? RecordType::kAcquire : RecordType::kTryFailed;
  if (result == 0 || (is_try && result == EBUSY)) {
    push(ring, Record{.time = now,
                      .request = request,
                      .address = reinterpret_cast<uint64_t>(lock),
                      .site = reinterpret_cast<uint64_t>(site),
                      .type = static_cast<uint16_t>(type),
                      .kind = static_cast<uint16_t>(kind),
                      .reserved = 0});
  }
  ring->header.call_request.store(outer, std::memory_order_release);
  return result;
}

template <typename Lock>
int recordRelease(int (*call)(Lock*), Lock* lock, void* site) {
  if (ThreadRing* ring = currentRing()) {
    push(ring, Record{.time = monotonicNs(),
                      .request = 0,
                      .address = reinterpret_cast<uint64_t>(lock),
                      .site = reinterpret_cast<uint64_t>(site),
                      .type = static_cast<uint16_t>(RecordType::kRelease),
                      .kind = 0,
                      .reserved = 0});
  } else {
    noteUnrecorded();
  }
  return call(lock);
}

NextSymbol<int (*)(pthread_mutex_t*)> next_mutex_lock{"pthread_mutex_lock"};
NextSymbol<int (*)(pthread_mutex_t*)> next_mutex_trylock{"pthread_mutex_trylock"};
NextSymbol<int (*)(pthread_mutex_t*)> next_mutex_unlock{"pthread_mutex_unlock"};
NextSymbol<int (*)(pthread_rwlock_t*)> next_rwlock_rdlock{"pthread_rwlock_rdlock"};
NextSymbol<int (*)(pthread_rwlock_t*)> next_rwlock_tryrdlock{"pthread_rwlock_tryrdlock"};
NextSymbol<int (*)(pthread_rwlock_t*)> next_rwlock_wrlock{"pthread_rwlock_wrlock"};
NextSymbol<int (*)(pthread_rwlock_t*)> next_rwlock_trywrlock{"pthread_rwlock_trywrlock"};
NextSymbol<int (*)(pthread_rwlock_t*)> next_rwlock_unlock{"pthread_rwlock_unlock"};
NextSymbol<int (*)(pthread_spinlock_t*)> next_spin_lock{"pthread_spin_lock"};
NextSymbol<int (*)(pthread_spinlock_t*)> next_spin_trylock{"pthread_spin_trylock"};
NextSymbol<int (*)(pthread_spinlock_t*)> next_spin_unlock{"pthread_spin_unlock"};

}  // namespace

// From the constructor: resolved before main, so no call in the program pays for dlsym.
void resolveLockFunctions() {
  next_mutex_lock.get();
  next_mutex_trylock.get();
  next_mutex_unlock.get();
  next_rwlock_rdlock.get();
  next_rwlock_tryrdlock.get();
  next_rwlock_wrlock.get();
  next_rwlock_trywrlock.get();
  next_rwlock_unlock.get();
  next_spin_lock.get();
  next_spin_trylock.get();
  next_spin_unlock.get();
}

}  // namespace incise::preload

using incise::preload::recordAcquire;
using incise::preload::RecordKind;
using incise::preload::recordRelease;
namespace preload = incise::preload;

INCISE_EXPORT int pthread_mutex_lock(pthread_mutex_t* mutex) {
  return recordAcquire(preload::next_mutex_lock.get(), mutex, RecordKind::kMutex, false,
                       __builtin_return_address(0));
}
INCISE_EXPORT int pthread_mutex_trylock(pthread_mutex_t* mutex) {
  return recordAcquire(preload::next_mutex_trylock.get(), mutex, RecordKind::kMutex, true,
                       __builtin_return_address(0));
}
INCISE_EXPORT int pthread_mutex_unlock(pthread_mutex_t* mutex) {
  return recordRelease(preload::next_mutex_unlock.get(), mutex, __builtin_return_address(0));
}
INCISE_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t* lock) {
  return recordAcquire(preload::next_rwlock_rdlock.get(), lock, RecordKind::kRwlockRead, false,
                       __builtin_return_address(0));
}
INCISE_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t* lock) {
  return recordAcquire(preload::next_rwlock_tryrdlock.get(), lock, RecordKind::kRwlockRead, true,
                       __builtin_return_address(0));
}
INCISE_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t* lock) {
  return recordAcquire(preload::next_rwlock_wrlock.get(), lock, RecordKind::kRwlockWrite, false,
                       __builtin_return_address(0));
}
INCISE_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t* lock) {
  return recordAcquire(preload::next_rwlock_trywrlock.get(), lock, RecordKind::kRwlockWrite, true,
                       __builtin_return_address(0));
}
INCISE_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t* lock) {
  return recordRelease(preload::next_rwlock_unlock.get(), lock, __builtin_return_address(0));
}
INCISE_EXPORT int pthread_spin_lock(pthread_spinlock_t* lock) {
  return recordAcquire(preload::next_spin_lock.get(), lock, RecordKind::kSpin, false,
                       __builtin_return_address(0));
}
INCISE_EXPORT int pthread_spin_trylock(pthread_spinlock_t* lock) {
  return recordAcquire(preload::next_spin_trylock.get(), lock, RecordKind::kSpin, true,
                       __builtin_return_address(0));
}
INCISE_EXPORT int pthread_spin_unlock(pthread_spinlock_t* lock) {
  return recordRelease(preload::next_spin_unlock.get(), lock, __builtin_return_address(0));
}
