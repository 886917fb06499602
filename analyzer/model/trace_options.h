// TraceOptions: how a report opens a trace (filters, where to find symbols,
// how many decoding threads, whether to show progress).
//
//   TraceOptions options;
//   options.filter.tids = {43};
//   options.symfs = "/srv/sysroot";
//   auto trace = Trace::open("app.trace", options);
#pragma once

#include <string>
#include <vector>

#include "analyzer/model/filter.h"
#include "analyzer/symbolize/demangle.h"

namespace incise::analyzer {

struct TraceOptions {
  Filter filter;
  std::string symfs;                    // --symfs: a root to find binaries under
  std::vector<std::string> debug_dirs;  // --debug-dir: extra build-id directories
  unsigned threads = 0;                 // chunk-decoding threads; 0 = hardware_concurrency
  bool progress = true;                 // progress bar when stderr is a terminal
  NameStyle names = NameStyle::kShort;  // --signatures: full demangled function names
};

}  // namespace incise::analyzer
