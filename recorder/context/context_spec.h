// --context NAME=SYMBOL and NAME=BIN:SYMBOL, checked: what the recorder reads
// at every event of a target thread (bpf/context.bpf.h) and the reports
// group by (`incise requests --by NAME`).
//
// NAME is what reports call the value: a letter or '_', then letters,
// digits, '_', '.' or '-', at most kMaxContextNameBytes; unique, and not
// `goroutine` (Go programs have that one without asking). SYMBOL is the
// variable's name in the ELF symbol table; BIN, when given, is the object
// that defines it (a library's path or file name), else the target's
// executable. At most MAX_CONTEXTS (bpf/context.h) values.
//
// `--context otel` (or otel:BIN) reads the OpenTelemetry thread context
// (OTEP 4947): the TLS pointer `otel_thread_ctx_v1` of the executable (or
// BIN) points to the thread's record; it gives two values, `trace_id` (the
// trace id's last 8 bytes, its random part in W3C trace context) and
// `span_id`, both as big-endian integers of the W3C bytes, 0 when the
// pointer is null or the record not valid.
//
//   Result<std::vector<ContextSpec>> specs = parseContextOptions({"req=request_id"});
//   // specs->at(0): {.name = "req", .binary = "", .symbol = "request_id"}
//   parseContextOptions({"otel"});   // trace_id and span_id, of otel_thread_ctx_v1
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"
#include "recorder/record_config.h"

namespace incise::recorder {

inline constexpr size_t kMaxContextNameBytes = 32;

inline constexpr std::string_view kOtelThreadContextSymbol = "otel_thread_ctx_v1";

// One option's values: one, or two for `otel`.
Result<std::vector<ContextSpec>> parseContextOption(const std::string& text);

// Every option, then the checks across them (count, unique names).
Result<std::vector<ContextSpec>> parseContextOptions(const std::vector<std::string>& texts);

}  // namespace incise::recorder
