// JSON output shared by reports (--json): one document on stdout, indented,
// ending in a newline, built with nlohmann::json; or JSON lines, one compact
// document a line. Strings from a trace need not be UTF-8 (a path, a
// command line, a symbol can hold any bytes): bytes that are not are written
// as U+FFFD, so the output always parses and nothing throws; and anything
// past ASCII is written as \uXXXX, so JSON printed to a terminal cannot
// carry a control sequence either.
//
//   nlohmann::json doc = {{"header", headerJson(trace)}, {"rows", rows}};
//   writeJson(std::cout, doc);
//   out << jsonLine(row) << "\n";
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

namespace incise::analyzer {

// Invalid UTF-8 in names (they come from binaries) is replaced, not thrown on.
void writeJson(std::ostream& out, const nlohmann::json& document);
// One line, without the newline; invalid UTF-8 replaced the same way.
std::string jsonLine(const nlohmann::json& document);
// A string as a JSON string literal, quotes included, escaped the same way:
// for writers that stream their JSON (the Chrome and speedscope exports).
std::string jsonQuoted(const std::string& text);

// Percent rounded to 2 decimals, as the tables print it.
double roundedPercent(double percent);

}  // namespace incise::analyzer
