// Where a Go binary's runtime keeps a goroutine's id and a thread's
// goroutine, read from the binary's DWARF (Go writes it unless linked with
// -w): the offset of `goid` in `runtime.g`, and for a thread on its g0 or
// signal g, of `m` in `runtime.g` and `curg` in `runtime.m` (the goroutine
// that thread's M runs). The Go mutex probes read the id at that offset
// from the current g (R14 in Go code), per binary, since the layout
// changes between Go releases.
//
//   Result<uint64_t> offset = goroutineIdOffset("/srv/bin/server");
//   if (!offset) note(offset.error().message());   // no DWARF: rows carry no goroutine ids
//   Result<GoRuntimeOffsets> all = goRuntimeOffsets("/srv/bin/server");  // {152, 48, 192}
//   Result<GoSyncOffsets> sync = goSyncOffsets("/srv/bin/server");       // {8, 12, 16}
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace incise::recorder {

struct GoRuntimeOffsets {
  uint64_t goid = 0;    // of goid in runtime.g
  uint64_t g_m = 0;     // of m in runtime.g; 0: not known (then m_curg is 0 too)
  uint64_t m_curg = 0;  // of curg in runtime.m; 0: not known
};

Result<GoRuntimeOffsets> goRuntimeOffsets(const std::string& binary);

// Where the RWMutex's semaphores and the Cond's notify list sit in their
// structures, so that a wait on one names the RWMutex or Cond itself;
// nullopt for a type or member the DWARF does not have.
struct GoSyncOffsets {
  std::optional<uint64_t> rw_writer_sem;  // writerSem in sync.RWMutex
  std::optional<uint64_t> rw_reader_sem;  // readerSem in sync.RWMutex
  std::optional<uint64_t> cond_notify;    // notify in sync.Cond
};
Result<GoSyncOffsets> goSyncOffsets(const std::string& binary);
Result<uint64_t> goroutineIdOffset(const std::string& binary);

}  // namespace incise::recorder
