// How a context's values are written: a whole number as the program stores
// it (a request id), or, for `--context otel`'s ids, the W3C hex form a
// tracing backend shows: trace_id as 32 digits, span_id as 16. A trace id is
// keyed by its last 8 bytes (the change rows' value; W3C makes them random)
// and written whole with the first 8 its rows carried (value_high, format
// 2.11). Files before 2.11 kept only the last 8: their trace ids are written
// as those 16 digits.
//
//   ContextValueText text = ContextValueText::of(header.options.contexts[slot]);
//   text.noteHigh(row.value, row.value_high);           // each change row
//   text.text(value)   -> "42", or "4bf92f3577b34da6a3ce929d0e0e4736"
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "format/metadata.h"

namespace incise::analyzer {

class ContextValueText {
 public:
  enum class Form : uint8_t {
    kNumber,         // decimal
    kOtelSpanId,     // 16 hex digits
    kOtelTraceId,    // 32 hex digits: the noted first 8 bytes, then the value
    kOtelTraceLow8,  // a file before 2.11: the trace id's last 8 bytes, 16 digits
  };

  ContextValueText() = default;
  explicit ContextValueText(Form form) : form_(form) {}
  // From the header's description of the context (its reading; a file
  // before 2.11 names otel's values by their symbol and names).
  static ContextValueText of(const format::ContextVariable& variable);

  Form form() const { return form_; }
  // Written as text (hex digits), not as a number, in JSON too.
  bool isHex() const { return form_ != Form::kNumber; }

  void noteHigh(uint64_t value, uint64_t high);
  std::optional<uint64_t> highOf(uint64_t value) const;

  std::string text(uint64_t value) const;

 private:
  Form form_ = Form::kNumber;
  std::unordered_map<uint64_t, uint64_t> high_of_;
};

}  // namespace incise::analyzer
