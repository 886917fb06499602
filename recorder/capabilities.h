// Whether this process may load BPF programs and open perf events, checked
// first so the user hears which capability is missing and how to get it,
// instead of a bare EPERM from the kernel later.
//
//   if (Status s = checkRecordingCapabilities(); !s) { std::cerr << s.message(); return 1; }
#pragma once

#include "format/status.h"

namespace incise::recorder {

// Ok with CAP_SYS_ADMIN, or with both CAP_BPF and CAP_PERFMON (effective).
Status checkRecordingCapabilities();

}  // namespace incise::recorder
