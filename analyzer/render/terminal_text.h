// terminalText: text from a trace made safe to print.
//
// A trace is input from the machine it was recorded on. A process names
// itself (prctl(PR_SET_NAME), its argv), and a binary names its symbols and
// its modules; any of them may hold ESC, CSI or OSC sequences that, written
// raw to a terminal, move the cursor, rewrite what is shown or retitle the
// window (a process named "\e]0;PWNED\a"). Every string that came from a
// trace goes through terminalText() before it leaves the analyzer as text:
// the table renderer does it for every cell, and info, dump, folded stacks,
// report headers and error messages do it for what they print themselves.
//
//   out << "comm: " << terminalText(process.comm) << "\n";
//   appendTerminalText(line, frame_name);      // into a line being built
//   terminalText("\x1b]0;PWNED\x07") == "\\x1b]0;PWNED\\x07"   // as printed: \x1b]0;PWNED\x07
//
// What is escaped: C0 controls (0x00-0x1f; tab and newline too, since a name
// is one cell or one line) and DEL as \xNN; bytes that are not UTF-8 as \xNN;
// C1 controls (U+0080-U+009F, which some terminals obey as ESC sequences) and
// the bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069,
// which reorder what is shown) as \u{NNNN}. Everything else, including any
// other UTF-8, is kept. A backslash is not escaped, so escaping is
// idempotent: text escaped twice reads as text escaped once, and a table may
// escape a cell its caller already escaped.
//
// JSON needs none of this: nlohmann escapes control characters itself, and
// writeJson (json_output.h) replaces bytes that are not UTF-8.
#pragma once

#include <string>
#include <string_view>

namespace incise::analyzer {

std::string terminalText(std::string_view text);
void appendTerminalText(std::string& out, std::string_view text);
// Whether terminalText(text) == text.
bool isTerminalSafe(std::string_view text);

}  // namespace incise::analyzer
