// JSON output shared by reports (--json): one document on stdout, indented,
// ending in a newline, built with nlohmann::json.
//
//   nlohmann::json doc = {{"header", headerJson(trace)}, {"rows", rows}};
//   writeJson(std::cout, doc);
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

namespace incise::analyzer {

// Invalid UTF-8 in names (they come from binaries) is replaced, not thrown on.
void writeJson(std::ostream& out, const nlohmann::json& document);

// Percent rounded to 2 decimals, as the tables print it.
double roundedPercent(double percent);

}  // namespace incise::analyzer
