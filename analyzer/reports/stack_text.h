// One line for a call path in a terminal table: leaf first, callers after
// " <- ", so the most specific frame survives truncation.
//
//   stackLine({"main", "read_config", "read"}) == "read <- read_config <- main"
//   stackLine(stack.root_first, stacks.names())   // the same from name ids
#pragma once

#include <span>
#include <string>
#include <vector>

#include "analyzer/model/name_table.h"

namespace incise::analyzer {

std::string stackLine(const std::vector<std::string>& root_first);
std::string stackLine(std::span<const NameId> root_first, const NameTable& names);

}  // namespace incise::analyzer
