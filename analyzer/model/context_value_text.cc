#include "analyzer/model/context_value_text.h"

#include "base/hex.h"

namespace incise::analyzer {
namespace {

// The symbol `--context otel` reads (recorder/context/context_spec.h).
constexpr std::string_view kOtelSymbol = "otel_thread_ctx_v1";

}  // namespace

ContextValueText ContextValueText::of(const format::ContextVariable& variable) {
  if (variable.reading == format::kContextReadingOtelTraceId)
    return ContextValueText(Form::kOtelTraceId);
  if (variable.reading == format::kContextReadingOtelSpanId)
    return ContextValueText(Form::kOtelSpanId);
  if (variable.reading.empty() && variable.symbol == kOtelSymbol) {
    if (variable.name == "trace_id") return ContextValueText(Form::kOtelTraceLow8);
    if (variable.name == "span_id") return ContextValueText(Form::kOtelSpanId);
  }
  return ContextValueText(Form::kNumber);
}

void ContextValueText::noteHigh(uint64_t value, uint64_t high) {
  if (form_ == Form::kOtelTraceId) high_of_[value] = high;
}

std::optional<uint64_t> ContextValueText::highOf(uint64_t value) const {
  auto found = high_of_.find(value);
  if (found == high_of_.end()) return std::nullopt;
  return found->second;
}

std::string ContextValueText::text(uint64_t value) const {
  switch (form_) {
    case Form::kNumber:
      return std::to_string(value);
    case Form::kOtelSpanId:
    case Form::kOtelTraceLow8:
      return hexWord(value);
    case Form::kOtelTraceId:
      return hexWord(highOf(value).value_or(0)) + hexWord(value);
  }
  return std::to_string(value);
}

}  // namespace incise::analyzer
