// Parses /proc/kallsyms text into kernel symbols sorted by address.
//
// A line is "ADDRESS TYPE NAME [MODULE]", e.g.
//   ffffffff81000000 T _stext
//   ffffffffc0a01000 t ext4_fill_super	[ext4]
// Only text symbols (types t/T/w/W) are kept: they are what samples land in.
// Lines with a zero address (kptr_restrict hides them from non-root readers)
// or another type are counted as ignored; lines that do not parse as counted
// as malformed. Never fails and never crashes: hostile text yields fewer
// symbols.
//
//   objfile::TextParseCounts counts;
//   std::vector<format::KernelSymbol> symbols = objfile::parseKallsyms(text, &counts);
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "format/metadata.h"
#include "objfile/text_lines.h"

namespace incise::objfile {

std::vector<format::KernelSymbol> parseKallsyms(std::string_view text,
                                                TextParseCounts* counts = nullptr);

// The same lines, visited in file order without copying a name: for a
// caller that keeps only a few of the ~150k symbols (`module` is empty for
// the kernel itself, else the name inside the brackets).
void forEachKallsymsTextSymbol(std::string_view text, TextParseCounts* counts,
                               const std::function<void(uint64_t address, std::string_view name,
                                                        std::string_view module)>& visit);

}  // namespace incise::objfile
