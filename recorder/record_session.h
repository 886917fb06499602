// One recording, from a parsed command line to a finished trace file.
//
// Order (libbpf-tools style, RAII instead of goto): capabilities, output
// file check, target filter, the command's child (waiting), open + load
// every source, then the trace starts: the file with its header (start
// time: now), attach every source, release the child, one "recording" line
// on stderr, then the poll loop until a signal, -d (counted from the
// trace's start), the command's exit, --max-size or a writer error; then
// drain, the trace's end time, symbols, footer.
//
//   return runRecording(parsed->config);   // the process exit status
//
// Exit status: 0 done; 1 could not record or the file could not be finished
// (the reason is printed); with -- CMD, the command's non-zero status.
#pragma once

#include "recorder/record_config.h"

namespace incise::recorder {

int runRecording(const RecordConfig& config);

}  // namespace incise::recorder
