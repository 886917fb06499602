// The header every report starts with: which trace, how long, how many
// events the report used, how many were lost — and, when more than 1% were
// lost (or chunks were damaged, or symbols were missing), a warning that the
// figures may be low.
//
//   printReportHeader(std::cout, "top", trace);
//   // incise top: app.trace (host db1, 6.1.0)
//   // duration 5.000 s; events used 41234 cpu_sample; lost 0 (0.00%)
//   nlohmann::json doc = {{"header", reportHeaderJson("top", trace)}};
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "analyzer/model/trace.h"

namespace incise::analyzer {

// Warning lines (without "warning: "), empty when the figures are complete.
std::vector<std::string> reportWarnings(Trace& trace, const LossSummary& losses);

void printReportHeader(std::ostream& out, const std::string& report, Trace& trace);
nlohmann::json reportHeaderJson(const std::string& report, Trace& trace);

}  // namespace incise::analyzer
