// Latency statistics: what `incise latency` prints per traced function,
// syscall, block device and io_uring opcode, from latency rows (a row per
// call) and latency histograms (--aggregate: counts per log2 bucket).
//
// A group is (source, probe, detail) — block I/O splits a device by
// operation — further split by `group_of` (LatencyGrouping::kByStack: the
// process and stack; a context value later): the key is whatever number the
// grouping gives a row. Per group: calls (each row weighs its `weight`, N
// with --sample N), total time, p50/p90/p99/max and a log2 histogram.
// Percentiles come from a DurationDistribution of the rows (exact up to 4,096
// rows, then within 0.8%); a group counted in BPF (--aggregate) has only its
// log2 buckets, and its percentiles are the upper bound of the bucket that
// holds them (`exact_percentiles` false), as bpftrace's hist() would say.
//
//   LatencyStatsBuilder stats(LatencyGrouping::kByName);
//   trace.forEachRow<format::Latency>([&](const format::Latency& r) { stats.add(r); });
//   for (const LatencyGroupStats& g : stats.finish()) print(g.source, g.probe, g.p99);
//   LatencyStatsBuilder per_request(LatencyGrouping::kByContext);
//   per_request.add(row, timeline.valueAt(row.tid, row.time));
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "analyzer/analyses/distributions/duration_distribution.h"
#include "analyzer/analyses/distributions/log2_histogram.h"
#include "format/event_kinds.h"

namespace incise::analyzer {

enum class LatencyGrouping { kByName, kByStack, kByContext };

struct LatencyGroupStats {
  uint64_t source = 0;  // format::LatencySource
  uint64_t probe = 0;
  uint64_t detail = 0;  // block I/O operation
  // kByStack: the group's process and stack (0 otherwise).
  uint64_t pid = 0;
  uint64_t stack_id = 0;
  // kByContext: the value (nullopt: unknown, or a histogram row).
  std::optional<uint64_t> value;
  uint64_t first_time = 0;  // of the group's first row: for naming its stack
  uint64_t count = 0;       // calls, weighted
  uint64_t rows = 0;        // rows and histogram buckets read
  uint64_t total_ns = 0;    // weighted
  uint64_t p50_ns = 0, p90_ns = 0, p99_ns = 0, max_ns = 0;
  uint64_t bytes = 0;   // weighted
  uint64_t errors = 0;  // calls with an error, weighted
  bool exact_percentiles = true;
  bool from_buckets = false;  // counted in BPF: percentiles are log2 bucket bounds
  bool sampled = false;       // some rows stand for more than one call
  Log2Histogram histogram{};  // weighted counts
};

class LatencyStatsBuilder {
 public:
  explicit LatencyStatsBuilder(LatencyGrouping grouping) : grouping_(grouping) {}
  void add(const format::Latency& row) { add(row, std::nullopt); }
  // kByContext: `value` is what the row's thread held at row.time.
  void add(const format::Latency& row, std::optional<uint64_t> value);
  void add(const format::LatencyHistogram& row);
  // Sorted by total time, longest first; ties by source, probe, detail.
  std::vector<LatencyGroupStats> finish() const;

 private:
  using Key = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, uint64_t>;
  struct Group {
    LatencyGroupStats stats;
    DurationDistribution durations;
    bool has_histograms = false;
  };
  Group& groupOf(uint64_t source, uint64_t probe, uint64_t detail, uint64_t pid, uint64_t stack,
                 uint64_t time, std::optional<uint64_t> value);

  LatencyGrouping grouping_;
  std::map<Key, Group> groups_;
};

// What one row stands for: the calls it counts (times its --sample weight),
// their summed time and the longest of them. A histogram row's calls are at
// least its bucket's start; its max_ns is only on the highest bucket's row.
// The one rule for the local statistics and the fleet's rows.
struct LatencyRowCalls {
  uint64_t calls = 0;
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
};
LatencyRowCalls callsOf(const format::Latency& row);
LatencyRowCalls callsOf(const format::LatencyHistogram& row);  // row.bucket < kLog2Buckets

// The upper bound of the log2 bucket holding the `percent`-th percentile
// (nearest rank), capped at `max`; 0 when empty.
uint64_t log2Percentile(const Log2Histogram& histogram, uint64_t percent, uint64_t max);

}  // namespace incise::analyzer
