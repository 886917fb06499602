// Where a Go binary's runtime keeps a goroutine's id: the offset of `goid`
// in `runtime.g`, read from the binary's DWARF (Go writes it unless linked
// with -w). The Go mutex probes read the id at that offset from the current
// g (R14 in Go code), per binary, since the layout changes between Go
// releases.
//
//   Result<uint64_t> offset = goroutineIdOffset("/srv/bin/server");
//   if (!offset) note(offset.error().message());   // no DWARF: rows carry no goroutine ids
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace incise::recorder {

Result<uint64_t> goroutineIdOffset(const std::string& binary);

}  // namespace incise::recorder
