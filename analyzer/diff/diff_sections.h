// The delta sections of a diff — functions, lock sites, off-CPU stacks, latency,
// allocation sites —
// as JSON arrays and terminal tables. `incise diff` (two files) and `incise
// archive diff --clickhouse` (two sets of traces in SQL) print them through
// these, so both show the same columns and the same --json keys.
//
//   nlohmann::json rows = functionDeltasJson(result.functions, /*limit=*/20);
//   out << "\nfunctions: ...\n";
//   printFunctionDeltas(result.functions, 20, out);
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "analyzer/diff/profile_diff.h"

namespace incise::analyzer {

// At most `limit` rows (0 = all), in the order given.
nlohmann::json functionDeltasJson(const std::vector<FunctionDelta>& rows, size_t limit);
nlohmann::json lockSiteDeltasJson(const std::vector<LockSiteDelta>& rows, size_t limit);
nlohmann::json offCpuDeltasJson(const std::vector<OffCpuDelta>& rows, size_t limit);
nlohmann::json latencyDeltasJson(const std::vector<LatencyDelta>& rows, size_t limit);
nlohmann::json allocSiteDeltasJson(const std::vector<AllocSiteDelta>& rows, size_t limit);

// Tables. An empty function list prints the header; empty lock-site,
// off-CPU, latency and allocation lists print nothing (the caller says why they are empty).
void printFunctionDeltas(const std::vector<FunctionDelta>& rows, size_t limit, std::ostream& out);
void printLockSiteDeltas(const std::vector<LockSiteDelta>& rows, size_t limit, std::ostream& out);
void printOffCpuDeltas(const std::vector<OffCpuDelta>& rows, size_t limit, std::ostream& out);
void printLatencyDeltas(const std::vector<LatencyDelta>& rows, size_t limit, std::ostream& out);
void printAllocSiteDeltas(const std::vector<AllocSiteDelta>& rows, size_t limit, std::ostream& out);

}  // namespace incise::analyzer
