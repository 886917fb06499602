// One recording, from a parsed command line to a finished trace file.
//
// Order (libbpf-tools style, RAII instead of goto): capabilities, output
// file, target filter, the command's child (waiting), open + load every
// source, attach, release the child, then the poll loop until a signal, -d,
// the command's exit, --max-size or a writer error; then drain, symbols,
// footer.
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
