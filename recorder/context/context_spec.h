// --context NAME=SYMBOL and NAME=BIN:SYMBOL, checked: what the recorder reads
// at every event of a target thread (bpf/context.bpf.h) and the reports
// group by (`incise requests --by NAME`).
//
// NAME is what reports call the value: a letter or '_', then letters,
// digits, '_', '.' or '-', at most kMaxContextNameBytes; unique, and not
// `goroutine` (Go programs have that one without asking). SYMBOL is the
// variable's name in the ELF symbol table; BIN, when given, is the object
// that defines it (a library's path or file name), else the target's
// executable. At most MAX_CONTEXTS (bpf/context.h) options.
//
//   Result<std::vector<ContextSpec>> specs = parseContextOptions({"req=request_id"});
//   // specs->at(0): {.name = "req", .binary = "", .symbol = "request_id"}
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"
#include "recorder/record_config.h"

namespace incise::recorder {

inline constexpr size_t kMaxContextNameBytes = 32;

Result<ContextSpec> parseContextOption(const std::string& text);

// Every option, then the checks across them (count, unique names).
Result<std::vector<ContextSpec>> parseContextOptions(const std::vector<std::string>& texts);

}  // namespace incise::recorder
