// Latency heat maps in one self-contained HTML file
// (render/html_page.h): per map, time runs left to right in equal columns,
// latency bottom to top in log2 buckets, and a cell's colour is how many
// calls of that time and latency there were (white: none; pale yellow to dark
// red on a log scale). Interactive: hover a cell for its time range, latency
// range and count; drag across columns to zoom into that time, "reset zoom"
// to zoom out; the search box keeps only the maps whose name matches.
//
//   HeatMap map{.name = "parse_request", .summary = "2000 calls, p99 2.1 ms",
//               .column_ns = 50'000'000, .first_bucket = 10};
//   map.cells = {{0, 3, 1}, ...};   // cells[column][bucket - first_bucket] = calls
//   writeHeatMapsHtml({map}, "app.trace: latency", out);
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace incise::analyzer {

struct HeatMap {
  std::string name;
  std::string summary;
  uint64_t start_ns = 0;   // time of column 0, from the trace start
  uint64_t column_ns = 1;  // width of a column
  size_t first_bucket = 0;
  // cells[column][i]: calls whose latency is in bucket first_bucket + i.
  std::vector<std::vector<uint64_t>> cells;
};

void writeHeatMapsHtml(const std::vector<HeatMap>& maps, const std::string& title,
                       std::ostream& out);

}  // namespace incise::analyzer
