#include "recorder/probes/go_wait_probes.h"

#include "recorder/probes/lock_probe_spec.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kWhat = "go waits";

}  // namespace

Result<std::optional<GoWaitProbes>> findGoWaitProbes(const std::string& binary,
                                                     const format::ObjectSymbols& object) {
  GoWaitProbes probes;
  auto probe = [&](const char* name, go_wait_role role) -> Result<const format::Symbol*> {
    const format::Symbol* function = findSymbol(object, name);
    if (!function) return function;
    INCISE_ASSIGN_OR_RETURN(GoFunctionProbe found,
                            goFunctionProbe(binary, object, *function, kWhat));
    probes.waits.push_back({.name = name, .role = role, .probe = std::move(found)});
    return function;
  };

  INCISE_ASSIGN_OR_RETURN(const format::Symbol* reader, probe(kGoSemacquireReader, GO_WAIT_READ));
  if (reader) {
    INCISE_RETURN_IF_ERROR(probe(kGoSemacquireWriter, GO_WAIT_WRITE).status());
  } else if (const format::Symbol* lock = findSymbol(object, kGoRWMutexLock);
             lock || findSymbol(object, kGoRUnlockSlow)) {
    // Before Go 1.20 RWMutex shares sync.Mutex's semaphore function, so
    // every contended sync.Mutex wait crosses these probes too: only a
    // binary with an RWMutex (its writer's Lock, or the slow RUnlock every
    // inlined RUnlock calls) gets them. RLock is inlined into its callers.
    INCISE_ASSIGN_OR_RETURN(const format::Symbol* shared,
                            probe(kGoSemacquireMutex, GO_WAIT_BY_CALLER));
    if (shared && lock) {
      probes.writer_caller =
          static_cast<int64_t>(lock->address) - static_cast<int64_t>(shared->address);
      probes.writer_caller_size = lock->size;
    }
  }
  INCISE_RETURN_IF_ERROR(probe(kGoNotifyListWait, GO_WAIT_COND).status());
  if (probes.waits.empty()) return std::optional<GoWaitProbes>();

  for (const char* name : kGoWakeFunctions) {
    if (!findSymbol(object, name)) continue;
    INCISE_ASSIGN_OR_RETURN(uint64_t entry, functionFileOffset(object, name, kWhat));
    probes.wakes.push_back(entry);
  }
  return std::optional<GoWaitProbes>(std::move(probes));
}

}  // namespace incise::recorder
