// --lock-probe BIN:ACQUIRE:RELEASE (split by options.cc): checking the
// binary and its symbols, and finding where to put the uprobes. A custom
// lock's address is the first argument of both functions.
//
//   Result<ResolvedLockProbe> probe = resolveLockProbe(config.lock_probes[0]);
//   if (!probe) die(probe.error().message());  // "--lock-probe: no symbol 'my_lock' in /srv/app"
//   attach at probe->acquire_offset and probe->release_offset in probe->binary
//
// Symbols are matched by their name in the ELF file (.symtab, else .dynsym),
// so C++ functions are named mangled (`_ZN3app4Lock4lockEv`): a demangled
// name would contain the ':' that separates the fields.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "format/metadata.h"
#include "recorder/record_config.h"

namespace incise::recorder {

struct ResolvedLockProbe {
  LockProbeSpec spec;
  uint64_t acquire_offset = 0;  // file offsets, as uprobes want them
  uint64_t release_offset = 0;
};

// Checks that the binary exists and defines both functions; errors name the
// option, the symbol and the file.
Result<ResolvedLockProbe> resolveLockProbe(const LockProbeSpec& spec);

// The file offset of function `name` in `object`: its address moved from the
// loadable segment that holds it to that segment's place in the file.
// `what` prefixes errors ("--lock-probe", "locks").
Result<uint64_t> functionFileOffset(const format::ObjectSymbols& object, std::string_view name,
                                    std::string_view what);

}  // namespace incise::recorder
