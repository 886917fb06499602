// The words for slow calls split over their threads' states
// (analyses/latency/slow_call_split.h): a table for `incise correlate`, and
// its JSON rows. Names from the trace are escaped by the table.
//
//   printSlowCalls(trace, calls, std::cout);
//   doc["slow_calls"] = slowCallsJson(trace, calls);
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "analyzer/analyses/latency/slow_call_split.h"

namespace incise::analyzer {

class Trace;

void printSlowCalls(Trace& trace, const std::vector<SlowCallSplit>& calls, std::ostream& out);
nlohmann::json slowCallsJson(Trace& trace, const std::vector<SlowCallSplit>& calls);

}  // namespace incise::analyzer
