// The line every command that reads a trace prints when the trace was
// damaged or cut short, so that no figure, export or archive entry comes
// from a partial trace without a word (info and check print the whole
// recovery report instead).
//
//   if (auto notice = salvageNotice(path, reader.recovery())) err << "incise top: " << *notice <<
//   "\n";
//   // warning: app.trace is damaged (no trailer at the end of the file (recording cut
//   // short?)): read what 11 intact blocks hold, 60119 of 61000 bytes; damage from offset
//   // 60119; what follows may be incomplete
#pragma once

#include <optional>
#include <string>

#include "format/reader.h"

namespace incise::analyzer {

// nullopt for a clean trace. The text is escaped for the terminal.
std::optional<std::string> salvageNotice(const std::string& path,
                                         const format::RecoveryReport& report);
// The same for chunks that failed to decode while a command read them.
std::optional<std::string> damagedChunksNotice(const std::string& path, uint64_t damaged_chunks);

}  // namespace incise::analyzer
