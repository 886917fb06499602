// Pushing one trace into the fleet archive.
//
// Order matters, so a push that dies anywhere leaves nothing visible:
//   1. the trace id (hash of the file) is looked up in `traces`: present
//      means pushed before, and nothing is done (rows are never doubled);
//   2. rows a previous, interrupted push of the same trace left in the
//      per-trace tables are deleted (ALTER ... DELETE, waited for);
//   3. lock intervals and lock-site times (streamed from the trace, one row
//      per event, never all held), then frames, stacks, samples and off-CPU
//      rows go in TabSeparated batches of `batch_rows`;
//   4. the `traces` row goes last. Queries only read trace ids listed in
//      `traces`, so until this row lands the pushed rows are invisible.
// frames and stacks are keyed by content: inserting them again is harmless.
//
//   ClickHouseClient client(url);
//   auto pushed = pushTrace(client, "app.trace", {.tags = {{"build", "v2"}}});
//   if (pushed && pushed->already_present) std::cout << "already pushed as " << pushed->trace_id;
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "analyzer/fleet/clickhouse_client.h"
#include "analyzer/fleet/fleet_schema.h"
#include "base/status.h"

namespace incise::analyzer {

struct PushOptions {
  std::string database = kDefaultFleetDatabase;
  std::map<std::string, std::string> tags;
  bool progress = true;  // a bar on stderr (when it is a terminal and the push is long)
  size_t batch_rows = 200'000;
  // Called before each table's rows are sent; an error stops the push there
  // (tests use it to simulate a push that dies half-way).
  std::function<Status(const std::string& table)> before_table;
};

struct PushResult {
  std::string trace_id;
  bool already_present = false;
  uint64_t rows = 0;            // rows inserted, all tables
  uint64_t cleaned_tables = 0;  // tables that held rows of an interrupted push
};

Result<PushResult> pushTrace(ClickHouseClient& client, const std::string& path,
                             const PushOptions& options);

}  // namespace incise::analyzer
