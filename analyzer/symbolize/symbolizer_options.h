// Where the symbolizer may look besides the trace itself.
//
// Trace paths are only ever opened below `symfs` (normalized; a path with
// ".." is refused), and build-id files only below the debug directories, so
// a hostile trace cannot make the analyzer read /etc/shadow.
//
//   SymbolizerOptions options{.symfs = "/srv/sysroot", .debug_dirs = {"/tmp/debug"}};
//   Symbolizer symbolizer(metadata, options);
#pragma once

#include <string>
#include <vector>

#include "analyzer/symbolize/demangle.h"

namespace incise::analyzer {

// True when DEBUGINFOD_URLS is set and not empty.
bool debuginfodConfigured();

struct SymbolizerOptions {
  std::string symfs;                    // root for trace paths; empty: never open them
  std::vector<std::string> debug_dirs;  // searched first: DIR/.build-id/xx/rest.debug, DIR/path
  std::string system_debug_dir = "/usr/lib/debug";  // searched after debug_dirs; "" skips it
  bool use_debuginfod = debuginfodConfigured();
  NameStyle names = NameStyle::kShort;  // Frame::name of functions; Frame::function stays full
};

}  // namespace incise::analyzer
