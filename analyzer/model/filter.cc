#include "analyzer/model/filter.h"

#include <algorithm>
#include <cctype>

#include "base/hex.h"
#include "options/number_option.h"

namespace incise::analyzer {
namespace {

// Seconds from the trace start: far more than any recording lasts (31 years).
constexpr options::RealBounds kSeconds{.min = 0, .max = 1e9, .unit = "seconds"};

constexpr size_t kTraceIdDigits = 32;

struct TypedValue {
  uint64_t value = 0;
  std::optional<uint64_t> high;
};

// A context value: a whole number as the program stores it, or its hex; an
// otel trace id as its 32 hex digits (0x optional).
Result<TypedValue> parseContextValue(const std::string& where, const std::string& text) {
  const bool prefixed = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string_view digits = std::string_view(text).substr(prefixed ? 2 : 0);
  if (digits.size() == kTraceIdDigits) {
    const bool all_hex = std::all_of(digits.begin(), digits.end(), [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c));
    });
    std::optional<uint64_t> high = parseHex(digits.substr(0, kTraceIdDigits / 2));
    std::optional<uint64_t> low = parseHex(digits.substr(kTraceIdDigits / 2));
    if (!all_hex || !high || !low)
      return Error("--where '" + where + "': " + text + " is not a 32-digit hex trace id");
    return TypedValue{.value = *low, .high = *high};
  }
  if (!prefixed) {
    INCISE_ASSIGN_OR_RETURN(uint64_t value,
                            options::parseWholeNumber("--where '" + where + "'", text, {}));
    return TypedValue{.value = value};
  }
  std::optional<uint64_t> value = parseHex(text);
  if (!value) return Error("--where '" + where + "': " + text + " is not a 64-bit hex number");
  return TypedValue{.value = *value};
}

}  // namespace

std::string ContextCondition::text() const {
  std::string text = name + (negated ? "!=" : "=");
  for (uint64_t value : values) {
    auto high = highs.find(value);
    text += (text.back() == '=' ? "" : ",") +
            (high == highs.end() ? std::to_string(value) : hexWord(high->second) + hexWord(value));
  }
  return text;
}

Result<ContextCondition> Filter::parseWhere(const std::string& text) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size())
    return Error("--where '" + text +
                 "': expected NAME=VALUE[,VALUE...] or NAME!=VALUE, e.g. req=42");
  ContextCondition condition;
  condition.negated = text[equals - 1] == '!';
  condition.name = text.substr(0, condition.negated ? equals - 1 : equals);
  if (condition.name.empty())
    return Error("--where '" + text + "': no context NAME before the '='");
  const std::string values = text.substr(equals + 1);
  size_t start = 0;
  while (true) {
    const size_t comma = values.find(',', start);
    const std::string item = values.substr(start, comma - start);
    if (item.empty()) return Error("--where '" + text + "': an empty VALUE");
    INCISE_ASSIGN_OR_RETURN(TypedValue typed, parseContextValue(text, item));
    condition.values.insert(typed.value);
    if (typed.high) condition.highs[typed.value] = *typed.high;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return condition;
}

Result<RelativeWindow> Filter::parseTimeRange(const std::string& text) {
  size_t dots = text.find("..");
  if (dots == std::string::npos) {
    return Error("--time '" + text + "': expected START..END in seconds, e.g. 1.5..3");
  }
  std::string start_text = text.substr(0, dots);
  std::string end_text = text.substr(dots + 2);
  RelativeWindow window;
  if (!start_text.empty()) {
    Result<uint64_t> start = options::parseSecondsAsNs("START", start_text, kSeconds);
    if (!start) return start.error().context("--time '" + text + "'");
    window.start_ns = *start;
  }
  if (!end_text.empty()) {
    Result<uint64_t> end = options::parseSecondsAsNs("END", end_text, kSeconds);
    if (!end) return end.error().context("--time '" + text + "'");
    window.end_ns = *end;
  }
  if (window.end_ns < window.start_ns) {
    return Error("--time '" + text + "': END is before START");
  }
  return window;
}

}  // namespace incise::analyzer
