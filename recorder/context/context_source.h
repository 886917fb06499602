// The context source (--context): finds where each target process keeps its
// context variables (context_locations.h) and puts that in the shared
// `context_processes` map, follows execs and exits, and turns the records
// of bpf/context.bpf.h (a thread's value changed) into format::ContextChange
// rows. It has no BPF object of its own: the CPU-sample, scheduler, lock and
// page-fault programs read the values, through the maps ContextMaps makes
// before they load.
//
// A variable that is missing, not thread-local or of an unsupported size in
// the command's or the -p processes' executable stops the recording with an
// error naming it. A process that lacks it (a child running another
// program) is recorded without that context, with a note saying so. With -a
// and --cgroup, the processes running at the start whose executable defines
// the variables are read, and every process that execs later is looked at,
// without a note for the many that lack them.
//
//   sources.push_back(makeContextSource(config));   // before the sources that read values
#pragma once

#include <memory>

#include "recorder/record_config.h"
#include "recorder/sources/source.h"

namespace incise::recorder {

// Also creates the recording's context maps (ContextMaps::recording()).
std::unique_ptr<Source> makeContextSource(const RecordConfig& config);

}  // namespace incise::recorder
