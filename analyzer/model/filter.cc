#include "analyzer/model/filter.h"

#include "options/number_option.h"

namespace incise::analyzer {
namespace {

// Seconds from the trace start: far more than any recording lasts (31 years).
constexpr options::RealBounds kSeconds{.min = 0, .max = 1e9, .unit = "seconds"};

}  // namespace

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
