#include "analyzer/render/json_output.h"

#include <cmath>

namespace incise::analyzer {

void writeJson(std::ostream& out, const nlohmann::json& document) {
  out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

double roundedPercent(double percent) {
  return std::round(percent * 100.0) / 100.0;
}

}  // namespace incise::analyzer
