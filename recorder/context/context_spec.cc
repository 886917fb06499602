// --context options, checked: see context_spec.h.
#include "recorder/context/context_spec.h"

#include <algorithm>
#include <cctype>

#include "bpf/context.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kGoroutine = "goroutine";

bool validName(const std::string& name) {
  if (name.empty() || name.size() > kMaxContextNameBytes) return false;
  auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  if (!letter(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return letter(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-';
  });
}

}  // namespace

Result<std::vector<ContextSpec>> parseContextOption(const std::string& text) {
  const std::string option = "--context " + text;
  if (text == "otel" || text.rfind("otel:", 0) == 0) {
    const std::string binary = text == "otel" ? "" : text.substr(5);
    if (text != "otel" && binary.empty()) return Error(option + ": empty BIN after 'otel:'");
    const std::string symbol(kOtelThreadContextSymbol);
    return std::vector<ContextSpec>{{.name = "trace_id",
                                     .binary = binary,
                                     .symbol = symbol,
                                     .reading = ContextReading::kOtelTraceId},
                                    {.name = "span_id",
                                     .binary = binary,
                                     .symbol = symbol,
                                     .reading = ContextReading::kOtelSpanId}};
  }
  const size_t equals = text.find('=');
  if (equals == std::string::npos)
    return Error(option + ": expected NAME=SYMBOL, NAME=BIN:SYMBOL, otel or otel:BIN");
  ContextSpec spec;
  spec.name = text.substr(0, equals);
  if (!validName(spec.name))
    return Error(option + ": the name '" + spec.name + "' must be 1.." +
                 std::to_string(kMaxContextNameBytes) +
                 " letters, digits, '_', '.' or '-', starting with a letter or '_'");
  if (spec.name == kGoroutine)
    return Error(option + ": '" + std::string(kGoroutine) +
                 "' is reserved (Go programs' goroutine ids); choose another name");
  const std::string target = text.substr(equals + 1);
  const size_t colon = target.rfind(':');
  if (colon != std::string::npos) {
    spec.binary = target.substr(0, colon);
    spec.symbol = target.substr(colon + 1);
    if (spec.binary.empty()) return Error(option + ": empty BIN before ':'");
  } else {
    spec.symbol = target;
  }
  if (spec.symbol.empty()) return Error(option + ": no SYMBOL after '='");
  return std::vector<ContextSpec>{spec};
}

Result<std::vector<ContextSpec>> parseContextOptions(const std::vector<std::string>& texts) {
  std::vector<ContextSpec> specs;
  for (const std::string& text : texts) {
    INCISE_ASSIGN_OR_RETURN(std::vector<ContextSpec> values, parseContextOption(text));
    for (ContextSpec& spec : values) {
      for (const ContextSpec& earlier : specs) {
        if (earlier.name == spec.name)
          return Error("--context " + text + ": the name '" + spec.name + "' is given twice");
      }
      specs.push_back(std::move(spec));
    }
  }
  if (specs.size() > MAX_CONTEXTS)
    return Error("--context: " + std::to_string(specs.size()) + " given, at most " +
                 std::to_string(MAX_CONTEXTS) +
                 " (otel counts two; each is one more read at every event)");
  return specs;
}

}  // namespace incise::recorder
