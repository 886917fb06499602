// report.h: machine-readable results of the bundled workloads, one `key=value`
// per line on stdout, so tests and tools/bench parse them with a split on '='.
//
// Keys are lower_snake_case; per-function values use a dot (`share.hot_a`).
// Integers print in decimal, addresses as 0x-prefixed hex, ratios with three
// decimals. Nothing else is written to stdout; diagnostics go to stderr.
//
// Example:
//   incise::workloads::report("lock_calls", counts.lock_calls);
//   incise::workloads::report_address("mutex_address", &mutex);
//   incise::workloads::report_ratio("share.hot_a", 0.6);   // share.hot_a=0.600
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace incise::workloads {

inline void report(std::string_view key, std::uint64_t value) {
  std::printf("%.*s=%" PRIu64 "\n", static_cast<int>(key.size()), key.data(), value);
}

inline void report(std::string_view key, std::string_view value) {
  std::printf("%.*s=%.*s\n", static_cast<int>(key.size()), key.data(),
              static_cast<int>(value.size()), value.data());
}

inline void report_address(std::string_view key, const void* address) {
  std::printf("%.*s=0x%" PRIxPTR "\n", static_cast<int>(key.size()), key.data(),
              reinterpret_cast<std::uintptr_t>(address));
}

inline void report_ratio(std::string_view key, double value) {
  std::printf("%.*s=%.3f\n", static_cast<int>(key.size()), key.data(), value);
}

// A comma-separated list, e.g. worker_tids=101,102,103.
inline void report_list(std::string_view key, const std::vector<std::uint64_t>& values) {
  std::string joined;
  for (std::uint64_t value : values) {
    if (!joined.empty()) joined += ',';
    joined += std::to_string(value);
  }
  report(key, joined);
}

}  // namespace incise::workloads
