// End-of-recording symbol collection: the subset of /proc/kallsyms that
// covers the kernel addresses hit, so the trace symbolizes on another machine.
// (User objects' symbol tables are read when first hit: ProcessTracker.)
//
// /proc/kallsyms holds ~150k text symbols (15-20 MB as parsed strings, ~5 MB
// as text). It is read once, as text, and scanned once into views of it
// (~40 bytes a line); only the names of the symbols kept are copied, so the
// recorder's peak memory grows by ~10 MB for a moment, not by every name.
//
//   std::vector<std::string> problems;
//   format::MetadataDelta symbols = collectSymbols(tracker, now, "/proc/kallsyms", &problems);
//   writer.addMetadata(std::move(symbols));
#pragma once

#include <set>
#include <string>
#include <vector>

#include "format/metadata.h"
#include "recorder/metadata/process_tracker.h"

namespace incise::recorder {

format::MetadataDelta collectSymbols(const ProcessTracker& tracker, uint64_t time,
                                     const std::string& kallsyms_path,
                                     std::vector<std::string>* problems);

// The symbols of `sorted` (by address) that contain an address of `addresses`,
// each with its successor (which bounds its size); one symbol per address.
std::vector<format::KernelSymbol> kernelSymbolsCovering(
    const std::vector<format::KernelSymbol>& sorted, const std::set<uint64_t>& addresses);

// The same subset read from a kallsyms file without holding all of it;
// empty when the file has no text symbols (kptr_restrict, unreadable).
std::vector<format::KernelSymbol> kernelSymbolsCoveringFile(const std::string& kallsyms_path,
                                                            const std::set<uint64_t>& addresses);

}  // namespace incise::recorder
