// Where to put the uprobes that see a Go binary's sync.RWMutex and
// sync.Cond waits (bpf/go_mutex.bpf.c): the runtime functions a goroutine
// parks in on those slow paths, entry and every RET (goFunctionProbe, as
// for lockSlow: never a uretprobe), and the functions that release or
// signal, entry only.
//
//   RLock behind a writer   sync.runtime_SemacquireRWMutexR (Go 1.20 on)
//   Lock behind readers     sync.runtime_SemacquireRWMutex (Go 1.20 on)
//   both, before Go 1.20    sync.runtime_SemacquireMutex, which lockSlow
//                           calls too: told apart by its skipframes
//                           argument (1 from lockSlow) and its caller
//                           (sync.(*RWMutex).Lock for the writer; RLock is
//                           inlined into its callers); probed only in a
//                           binary with an RWMutex, since every contended
//                           sync.Mutex wait crosses it too
//   Cond.Wait               sync.runtime_notifyListWait
//   releases and signals    sync.runtime_Semrelease,
//                           sync.runtime_notifyListNotifyOne and ...All
//
// The names are the runtime's go:linkname'd symbols as .symtab spells them.
// A function the linker left out (a program without Cond.Signal) is not
// probed.
//
//   Result<std::optional<GoWaitProbes>> probes = findGoWaitProbes(binary, object);
//   for (const GoWaitFunction& f : probes->waits) attach go_sema_wait at f.probe.entry,
//       go_sema_woken at each of f.probe.returns;
//   for (uint64_t wake : probes->wakes) attach go_sema_wake at wake;
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "bpf/go_mutex.h"
#include "format/metadata.h"
#include "recorder/probes/go_mutex_probes.h"

namespace incise::recorder {

struct GoWaitFunction {
  std::string name;
  go_wait_role role = GO_WAIT_READ;
  GoFunctionProbe probe;
};

struct GoWaitProbes {
  std::vector<GoWaitFunction> waits;
  std::vector<uint64_t> wakes;  // file offsets of the release and signal functions
  // GO_WAIT_BY_CALLER: sync.(*RWMutex).Lock's start relative to the probed
  // function's, and its size (0: no writer in the binary).
  int64_t writer_caller = 0;
  uint64_t writer_caller_size = 0;
};

// nullopt: no RWMutex or Cond wait in the binary. An Error: one of its
// functions could not be probed (its code is not what the matcher knows).
Result<std::optional<GoWaitProbes>> findGoWaitProbes(const std::string& binary,
                                                     const format::ObjectSymbols& object);

inline constexpr const char* kGoSemacquireReader = "sync.runtime_SemacquireRWMutexR";
inline constexpr const char* kGoSemacquireWriter = "sync.runtime_SemacquireRWMutex";
inline constexpr const char* kGoSemacquireMutex = "sync.runtime_SemacquireMutex";
inline constexpr const char* kGoRWMutexLock = "sync.(*RWMutex).Lock";
inline constexpr const char* kGoRUnlockSlow = "sync.(*RWMutex).rUnlockSlow";
inline constexpr const char* kGoNotifyListWait = "sync.runtime_notifyListWait";
inline constexpr const char* kGoWakeFunctions[] = {"sync.runtime_Semrelease",
                                                   "sync.runtime_notifyListNotifyOne",
                                                   "sync.runtime_notifyListNotifyAll"};

}  // namespace incise::recorder
