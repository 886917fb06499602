// pprof export: a trace's CPU samples as pprof's profile.proto (the format
// `go tool pprof`, Pyroscope and Parca read), gzipped.
//
// Sample types: samples/count (one per CPU sample) and cpu/nanoseconds (the
// samples' periods; for a sample event other than cpu-clock, EVENT/count).
// Samples are aggregated per (pid, tid, stack) and labelled pid, tid and
// thread (the thread's name). Locations are per (pid, address), attached to
// the process's mapping (with its build-id) when one contains the address;
// kernel and JIT frames have no mapping. Every location carries its
// function, symbolized here (return addresses looked up at address - 1, as
// the reports do), and mappings say has_functions, so pprof does not try to
// symbolize again.
//
//   auto trace = Trace::open("app.trace", {});
//   Result<perftools::profiles::Profile> profile = buildPprofProfile(**trace);
//   Status written = writePprof(**trace, out);   // gzipped bytes
#pragma once

#include <ostream>

#include "analyzer/export/profile.pb.h"
#include "analyzer/model/trace.h"
#include "format/status.h"

namespace incise::analyzer {

perftools::profiles::Profile buildPprofProfile(Trace& trace);
Status writePprof(Trace& trace, std::ostream& out);

}  // namespace incise::analyzer
