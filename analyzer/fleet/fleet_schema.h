// The fleet archive's tables in ClickHouse, created idempotently.
//
// Tables (in one database, "incise" unless --database says otherwise):
//   schema_version  the schema's version, so a newer incise can migrate
//   traces          one row per trace: id, host, kernel, command, build-ids,
//                   start, duration, tags, lost counts; written LAST by a
//                   push, so queries (which only read trace ids listed here)
//                   never see a half-pushed trace
//   frames          symbolized frame: name, module, build-id (content-keyed)
//   stacks          call path: frame keys and names, root first (content-keyed)
//   samples         CPU samples per (trace, 1-second bucket, thread, stack)
//   lock_intervals  one row per lock acquisition
//   lock_site_times one row per wait and per critical section, with the
//                   acquire site `incise diff` names it by (version 2)
//   latency_times   one row per timed call, or per log2 bucket counted in
//                   BPF, named as `incise latency` names it (version 3)
//   off_cpu         off-CPU ns per (trace, stack, reason)
//   alloc_sites     sampled allocations per (trace, site): bytes allocated
//                   and live at the end, as `incise diff` has them (version 5)
// The DDL with its ORDER BY reasoning is in fleet_schema.cc.
//
//   ClickHouseClient client(url);
//   Status ready = initFleetSchema(client, "incise");   // twice is fine
//   Status usable = checkFleetSchema(client, "incise"); // before push/diff/top
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/fleet/clickhouse_client.h"
#include "base/status.h"

namespace incise::analyzer {

inline constexpr uint32_t kFleetSchemaVersion = 5;
inline constexpr const char* kDefaultFleetDatabase = "incise";

// An error unless `name` is a plain identifier ([A-Za-z_][A-Za-z0-9_]*).
Status checkDatabaseName(const std::string& name);

// CREATE ... IF NOT EXISTS statements, in order.
std::vector<std::string> fleetSchemaStatements(const std::string& database);

// Creates what is missing and records the version. Versions 1 to 4, which
// lack some of lock_site_times, latency_times, sample_contexts and
// alloc_sites, are upgraded: the tables are created and the version
// recorded; traces pushed before have no rows in them.
// An error for a newer version.
Status initFleetSchema(ClickHouseClient& client, const std::string& database);

// An error (naming `incise archive init`) when the tables are missing or of
// another version.
Status checkFleetSchema(ClickHouseClient& client, const std::string& database);

}  // namespace incise::analyzer
