// The one visible list of sources. A source the command line does not ask
// for is simply not created; each source decides for itself whether this
// kernel can run it (Source::open says why not).
#include "recorder/context/context_source.h"
#include "recorder/sources/alloc_source.h"
#include "recorder/sources/block_io_source.h"
#include "recorder/sources/function_latency_source.h"
#include "recorder/sources/go_mutex_source.h"
#include "recorder/sources/io_uring_source.h"
#include "recorder/sources/kernel_function_source.h"
#include "recorder/sources/lock_source.h"
#include "recorder/sources/mmap_source.h"
#include "recorder/sources/page_fault_source.h"
#include "recorder/sources/preload_lock_source.h"
#include "recorder/sources/profile_source.h"
#include "recorder/sources/sched_source.h"
#include "recorder/sources/source.h"
#include "recorder/sources/syscall_latency_source.h"

namespace incise::recorder {

std::vector<std::unique_ptr<Source>> createSources(const RecordConfig& config,
                                                   UprobeAttacher* attacher,
                                                   std::shared_ptr<PreloadRings> preload) {
  std::vector<std::unique_ptr<Source>> sources;
  // Mappings first, so their records flow before any sample that lands in a
  // new mapping (they carry no samples or lock rows of their own).
  sources.push_back(makeMmapSource());
  // --context: made before the sources that read the values, as it makes
  // the maps they share.
  if (!config.contexts.empty()) sources.push_back(makeContextSource(config));
  // Process life (fork/exec/exit/comm) comes from the scheduler program, which
  // also follows children of targets: it runs even with --no-sched and then
  // emits only process events. It is attached before the other event sources
  // (sources attach in this order), so every sample and lock row falls where
  // the switches of its thread are already recorded. It also sees futex
  // waits at their blocking switch; a wait inside a lock call the lock
  // source probes belongs to that call (bpf/lock_calls.bpf.h).
  auto lock_calls = std::make_shared<SharedMap>("pending_calls");
  sources.push_back(makeSchedSource(config.sched, lock_calls));
  sources.push_back(makeProfileSource());
  // Mode `all`: a command started with libincise-preload.so records its lock
  // calls in process; uprobes on the C library serve every other target.
  bool locks_in_process = preload && locksThroughPreload(config);
  if (locks_in_process) sources.push_back(makePreloadLockSource(preload));
  bool probe_libc = config.lock_mode == LockMode::kAll && !locks_in_process;
  if (probe_libc || !config.lock_probes.empty())
    sources.push_back(makeLockSource(lock_calls, probe_libc));
  // Go parks goroutines on a mutex without a futex wait: its slow paths are
  // probed in Go targets whenever locks are recorded, and in Go programs
  // exec'd later through the attacher.
  if (config.lock_mode != LockMode::kOff) sources.push_back(makeGoMutexSource(attacher));
  if (config.page_faults) sources.push_back(makePageFaultSource());
  if (config.alloc_sample_bytes != 0) sources.push_back(makeAllocSource());
  if (hasUserFunctions(config)) sources.push_back(makeFunctionLatencySource());
  if (hasKernelFunctions(config)) sources.push_back(makeKernelFunctionSource());
  if (!config.syscalls.empty()) sources.push_back(makeSyscallLatencySource());
  if (config.block_io) sources.push_back(makeBlockIoSource());
  if (config.io_uring) sources.push_back(makeIoUringSource());
  return sources;
}

}  // namespace incise::recorder
