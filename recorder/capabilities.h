// Whether this process may load BPF programs and open perf events, checked
// first so the user hears which capability is missing and how to get it,
// instead of a bare EPERM from the kernel later; and giving up what is no
// longer needed once everything is attached.
//
//   if (Status s = checkRecordingCapabilities(); !s) { std::cerr << s.message(); return 1; }
//   ... open and attach every source ...
//   if (Status s = dropCapabilitiesAfterAttach(); !s) warn(s.message());
#pragma once

#include <initializer_list>

#include "base/status.h"

namespace incise::recorder {

// Older headers may lack the 5.8 capabilities; their numbers are fixed.
inline constexpr int kCapPerfmon = 38;
inline constexpr int kCapBpf = 39;

// Ok with CAP_SYS_ADMIN, or with both CAP_BPF and CAP_PERFMON (effective).
Status checkRecordingCapabilities();

// Once attached, the poll loop only reads rings and map fds it already holds,
// other users' /proc/PID files and binaries (CAP_SYS_PTRACE,
// CAP_DAC_READ_SEARCH) and kernel addresses in /proc/kallsyms (CAP_SYSLOG).
// Clears every other capability from the calling thread's effective,
// permitted and inheritable sets (and the ambient set), so a bug in the
// long-running loop cannot load programs, open perf events or act as root.
// Threads started earlier (the writer's compressor) keep their own sets.
Status dropCapabilitiesAfterAttach();

// Clears every capability but `kept` from the calling thread's effective
// and permitted sets, and all of its inheritable and ambient ones; `step`
// names the caller in errors.
Status keepOnlyCapabilities(std::initializer_list<int> kept, const char* step);

}  // namespace incise::recorder
