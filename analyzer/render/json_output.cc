#include "analyzer/render/json_output.h"

#include <cmath>

namespace incise::analyzer {

// ensure_ascii: everything past ASCII is written as \uXXXX, so no byte of a
// name (a C1 control, a bidi override) reaches a terminal raw.
void writeJson(std::ostream& out, const nlohmann::json& document) {
  out << document.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) << "\n";
}

std::string jsonLine(const nlohmann::json& document) {
  return document.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

std::string jsonQuoted(const std::string& text) {
  return jsonLine(nlohmann::json(text));
}

double roundedPercent(double percent) {
  return std::round(percent * 100.0) / 100.0;
}

}  // namespace incise::analyzer
