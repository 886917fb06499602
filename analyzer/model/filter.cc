#include "analyzer/model/filter.h"

#include <cmath>
#include <cstdlib>

namespace incise::analyzer {
namespace {

// Seconds as typed ("1.5") to ns; nullopt when it is not a plain non-negative number.
std::optional<uint64_t> parseSeconds(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double seconds = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(seconds) || seconds < 0 ||
      seconds > 1e9) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(std::llround(seconds * 1e9));
}

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
    auto start = parseSeconds(start_text);
    if (!start)
      return Error("--time '" + text + "': '" + start_text + "' is not a number of seconds");
    window.start_ns = *start;
  }
  if (!end_text.empty()) {
    auto end = parseSeconds(end_text);
    if (!end) return Error("--time '" + text + "': '" + end_text + "' is not a number of seconds");
    window.end_ns = *end;
  }
  if (window.end_ns < window.start_ns) {
    return Error("--time '" + text + "': END is before START");
  }
  return window;
}

}  // namespace incise::analyzer
