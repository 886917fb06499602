// End-of-recording symbol collection: the subset of /proc/kallsyms that
// covers the kernel addresses hit, so the trace symbolizes on another machine.
// (User objects' symbol tables are read when first hit: ProcessTracker.)
//
//   std::vector<std::string> problems;
//   format::MetadataDelta symbols = collectSymbols(tracker, now, "/proc/kallsyms", &problems);
//   writer.addMetadata(std::move(symbols));
#pragma once

#include <set>
#include <string>
#include <vector>

#include "format/metadata.h"
#include "recorder/process_tracker.h"

namespace incise::recorder {

format::MetadataDelta collectSymbols(const ProcessTracker& tracker, uint64_t time,
                                     const std::string& kallsyms_path,
                                     std::vector<std::string>* problems);

// The symbols that contain `addresses`, each followed by the next symbol so
// the analyzer can bound its size. `sorted` is parseKallsyms output.
std::vector<format::KernelSymbol> kernelSymbolsCovering(
    const std::vector<format::KernelSymbol>& sorted, const std::set<uint64_t>& addresses);

}  // namespace incise::recorder
