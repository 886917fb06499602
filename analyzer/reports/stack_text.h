// One line for a call path in a terminal table: leaf first, callers after
// " <- ", so the most specific frame survives truncation.
//
//   stackLine({"main", "read_config", "read"}) == "read <- read_config <- main"
#pragma once

#include <string>
#include <vector>

namespace incise::analyzer {

std::string stackLine(const std::vector<std::string>& root_first);

}  // namespace incise::analyzer
