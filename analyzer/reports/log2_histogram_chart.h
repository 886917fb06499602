// A log2 histogram of durations as a small terminal bar chart, and as JSON.
//
// Only the buckets from the first to the last non-empty one are shown.
// Bucket i covers [2^i, 2^(i+1)) ns (bucket 0 also holds 0), labelled with
// its lower bound in a compact unit.
//
//   renderLog2Histogram(stats.hold_histogram, std::cout, "    ");
//   //     >= 512ns   |##########                               |  12
//   //     >= 1.02us  |########################################|  48
//   json["hold_histogram"] = log2HistogramJson(stats.hold_histogram);
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "analyzer/analyses/distributions/log2_histogram.h"

namespace incise::analyzer {

// "512ns", "1.02us", "524us", "1.07s": three significant digits at most.
std::string compactDuration(uint64_t ns);

// `label` heads the bucket column ("HOLD >=", "LATENCY >=").
void renderLog2Histogram(const Log2Histogram& histogram, std::ostream& out,
                         const std::string& indent, size_t bar_width = 40,
                         const std::string& label = "HOLD >=");

// [{"from_ns": 512, "to_ns": 1024, "count": 12}, ...], non-empty range only.
nlohmann::json log2HistogramJson(const Log2Histogram& histogram);

}  // namespace incise::analyzer
