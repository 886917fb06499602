// Where libincise-preload.so is, and whether it can enter a command.
//
// The library is looked for relative to the running incise-record
// (/proc/self/exe), never on a search path: DIR/bin/incise-record uses
// DIR/lib/incise/libincise-preload.so (cmake --install, the Debian
// package), and a build tree's recorder/incise-record uses
// preload/libincise-preload.so beside it.
//
// The dynamic loader ignores LD_PRELOAD for a statically linked program
// (there is no loader) and, in secure-execution mode, for a setuid or setgid
// one; preloadRefusal says so in a sentence, and the recorder then records
// that command's lock calls through uprobes where they work.
//
//   Result<std::string> library = findPreloadLibrary();
//   if (std::optional<std::string> why = preloadRefusal(config.command[0])) warn(*why);
#pragma once

#include <optional>
#include <string>

#include "base/status.h"

namespace incise::recorder {

inline constexpr char kPreloadLibraryName[] = "libincise-preload.so";

Result<std::string> findPreloadLibrary();

// Why the library cannot be preloaded into `program` (as a command names it:
// a path, or a name looked up in PATH); nullopt when it can, or when the
// program cannot be read (exec then names the problem).
std::optional<std::string> preloadRefusal(const std::string& program);

}  // namespace incise::recorder
