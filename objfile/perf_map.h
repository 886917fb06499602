// Parses a JIT perf map (/tmp/perf-PID.map, as written by node
// --perf-basic-prof, the JVM's perf-map-agent, ...) into entries.
//
// A line is "START SIZE NAME", START and SIZE in hex (0x optional), NAME the
// rest of the line, spaces included:
//   3ef0a9c0 2c LazyCompile:~processTicksAndRejections node:internal/process:67
// Entries keep file order: a JIT that reuses an address appends a new line,
// so a later line for the same address is the newer one. Malformed lines
// (bad hex, no name, START+SIZE overflowing) are skipped and counted; zero
// sizes are counted as ignored. Never fails and never crashes.
//
//   std::vector<format::PerfMapEntry> entries = objfile::parsePerfMap(text);
#pragma once

#include <string_view>
#include <vector>

#include "format/metadata.h"
#include "objfile/text_lines.h"

namespace incise::objfile {

std::vector<format::PerfMapEntry> parsePerfMap(std::string_view text,
                                               TextParseCounts* counts = nullptr);

}  // namespace incise::objfile
