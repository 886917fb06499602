// pprof export: a trace's CPU samples, or its sampled allocations, as
// pprof's profile.proto (the format `go tool pprof`, Pyroscope and Parca
// read), gzipped.
//
// Sample types: samples/count (one per CPU sample) and cpu/nanoseconds (the
// samples' periods; for a sample event other than cpu-clock, EVENT/count).
// Samples are aggregated per (pid, tid, stack) and labelled pid, tid and
// thread (the thread's name). Frames are the reports' (stackFrames: the
// recorder's own frames dropped, broken stacks cut). Locations are per (pid,
// address), the address being the one symbolized (a return address - 1),
// attached to the process's mapping (with its build-id) when one contains
// it; kernel and JIT frames have no mapping. Each mapping range appears
// once; the first is the busiest process's main binary. A named frame's
// location carries its function, with the source file and line when a local
// debug file or binary has line tables (so `pprof -list` works), else an
// empty file name; an unnamed one carries none, and its mapping is not
// marked has_functions, so `go tool pprof` symbolizes it from the binary.
//
// The allocation profile (a recording with --alloc) is laid out as Go's heap
// profile: alloc_objects/count, alloc_space/bytes, inuse_objects/count and
// inuse_space/bytes (pprof opens on inuse_space), values estimated from the
// samples as `incise alloc` has them (alloc_profile.h), "in use" meaning
// still allocated at the end of the recording; the period is the mean bytes
// between samples. Samples are per (pid, stack), labelled pid.
//
//   auto trace = Trace::open("app.trace", {});
//   perftools::profiles::Profile profile = buildPprofProfile(**trace);
//   Status written = writePprof(**trace, out, PprofProfileKind::kAllocations);   // gzipped
#pragma once

#include <ostream>

#include "analyzer/export/profile.pb.h"
#include "analyzer/model/trace.h"
#include "base/status.h"

namespace incise::analyzer {

enum class PprofProfileKind { kCpu, kAllocations };

perftools::profiles::Profile buildPprofProfile(Trace& trace,
                                               PprofProfileKind kind = PprofProfileKind::kCpu);
Status writePprof(Trace& trace, std::ostream& out, PprofProfileKind kind = PprofProfileKind::kCpu);

}  // namespace incise::analyzer
