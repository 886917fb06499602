#include "analyzer/fleet/fleet_schema.h"

#include <regex>

namespace incise::analyzer {
namespace {

// Sorting keys, and why:
//  - Every query starts from a set of trace ids (a selector resolved against
//    `traces`), so the per-trace tables lead with trace_id: the primary index
//    skips every granule of the other traces, and one trace's rows are
//    contiguous on disk.
//  - Per-function queries aggregate a trace's rows by stack, then look the
//    stack up: stack_key comes second, so rows of one stack are adjacent
//    (cheap GROUP BY, good compression of the repeated key).
//  - stacks and frames are keyed by a hash of their content, the same on
//    every host: ORDER BY the key makes the IN (...) lookups of a query index
//    hits, and ReplacingMergeTree folds the copies that many traces insert.
//  - traces is small; ordered by trace_id for the existence check of a push.
//  - Per-trace tables are partitioned by month of the trace's start, so old
//    data is dropped with ALTER TABLE ... DROP PARTITION (18.x has no TTL).
constexpr const char* kStatements[] = {
    "CREATE DATABASE IF NOT EXISTS {db}",

    "CREATE TABLE IF NOT EXISTS {db}.schema_version (version UInt32, applied_at DateTime) "
    "ENGINE = ReplacingMergeTree ORDER BY version",

    "CREATE TABLE IF NOT EXISTS {db}.traces ("
    " trace_id String, host String, kernel String,"
    " command String, program String,"  // argv joined; argv[0] without its directory
    " build_id_objects Array(String), build_ids Array(String),"  // parallel: object path, hex id
    " start_date Date, start_ns UInt64, duration_ns UInt64, sample_hz UInt32,"
    " cpu_samples UInt64,"  // CPU samples pushed: the per-trace denominator
    " tags Array(String),"  // 'key=value'
    " lost_sources Array(String), lost_counts Array(UInt64),"
    " pushed_at DateTime"
    ") ENGINE = ReplacingMergeTree(pushed_at) PARTITION BY toYYYYMM(start_date) "
    "ORDER BY trace_id",

    "CREATE TABLE IF NOT EXISTS {db}.frames ("
    " frame_key UInt64, name String, module String, build_id String"
    ") ENGINE = ReplacingMergeTree ORDER BY frame_key",

    "CREATE TABLE IF NOT EXISTS {db}.stacks ("
    " stack_key UInt64, frame_keys Array(UInt64), names Array(String)"  // root first
    ") ENGINE = ReplacingMergeTree ORDER BY stack_key",

    "CREATE TABLE IF NOT EXISTS {db}.samples ("
    " trace_id String, start_date Date, second UInt32,"  // seconds since the trace start
    " pid UInt32, tid UInt32, stack_key UInt64, samples UInt64, weight UInt64"
    ") ENGINE = MergeTree PARTITION BY toYYYYMM(start_date) "
    "ORDER BY (trace_id, stack_key, second, tid)",

    // The samples of threads that held --context values, again, with the
    // values by name (a context whose value was unknown left out): what
    // `archive top --where` reads. A table beside samples rather than
    // columns of it, so a trace without contexts costs nothing and older
    // archives gain it with CREATE ... IF NOT EXISTS alone.
    "CREATE TABLE IF NOT EXISTS {db}.sample_contexts ("
    " trace_id String, start_date Date, second UInt32,"
    " pid UInt32, tid UInt32, stack_key UInt64, samples UInt64, weight UInt64,"
    " context_names Array(String), context_values Array(UInt64)"
    ") ENGINE = MergeTree PARTITION BY toYYYYMM(start_date) "
    "ORDER BY (trace_id, stack_key, second, tid)",

    "CREATE TABLE IF NOT EXISTS {db}.lock_intervals ("
    " trace_id String, start_date Date, time_ns UInt64,"  // request, ns since the trace start
    " wait_ns UInt64, hold_ns UInt64,"                    // hold 0: release not seen
    " pid UInt32, tid UInt32, address UInt64, lock_kind String, flags UInt32,"
    " stack_key UInt64, releaser_tid UInt32"
    ") ENGINE = MergeTree PARTITION BY toYYYYMM(start_date) "
    "ORDER BY (trace_id, stack_key, time_ns)",

    // What `incise diff` takes lock percentiles from, already grouped by
    // site name at push (the site is the first frame outside the lock
    // library, found by the C++ LockSites, not reproducible in SQL). Holds
    // of contended-mode traces are inferred from wakes, so they are not rows
    // of lock_intervals: hence a table of its own rather than a column.
    "CREATE TABLE IF NOT EXISTS {db}.lock_site_times ("
    " trace_id String, start_date Date, site String,"
    " context String,"             // 'site <- caller'
    " measure String, ns UInt64,"  // 'wait' or 'hold'
    " inferred UInt8"              // a hold inferred from a wake
    ") ENGINE = MergeTree PARTITION BY toYYYYMM(start_date) "
    "ORDER BY (trace_id, site, measure)",

    // What `incise diff` takes latency percentiles from: a row per timed
    // call (ns its duration, calls what it stands for under --sample N), or
    // per log2 bucket counted in BPF (--aggregate: counted 1, ns 0), named
    // by kind and name as `incise latency` names them, so traces whose
    // probe numbers differ meet. Grouped by name first, like lock_site_times.
    "CREATE TABLE IF NOT EXISTS {db}.latency_times ("
    " trace_id String, start_date Date, kind String, name String,"
    " bucket UInt8, ns UInt64, calls UInt64, total_ns UInt64, max_ns UInt64, counted UInt8"
    ") ENGINE = MergeTree PARTITION BY toYYYYMM(start_date) "
    "ORDER BY (trace_id, kind, name)",

    // Sampled allocations (--alloc) per site, as `incise diff` has them:
    // estimated bytes and allocations (in thousandths, so sums round as
    // the local totals do), the same of blocks still live at the trace's
    // end, and the site's largest call path (root first). A row per site
    // and trace: the site is the C++ allocationSite, not reproducible in SQL.
    "CREATE TABLE IF NOT EXISTS {db}.alloc_sites ("
    " trace_id String, start_date Date, site String, stack Array(String),"
    " allocated_bytes UInt64, allocated_milli UInt64, samples UInt64,"
    " live_bytes UInt64, live_milli UInt64, live_samples UInt64"
    ") ENGINE = MergeTree PARTITION BY toYYYYMM(start_date) "
    "ORDER BY (trace_id, site)",

    "CREATE TABLE IF NOT EXISTS {db}.off_cpu ("
    " trace_id String, start_date Date, stack_key UInt64,"
    " reason String,"  // 'preempted', or the task state when blocked: 'S', 'D', 'state 0x..'
    " ns UInt64, count UInt64"
    ") ENGINE = MergeTree PARTITION BY toYYYYMM(start_date) "
    "ORDER BY (trace_id, stack_key, reason)",
};

std::string withDatabase(std::string text, const std::string& database) {
  for (size_t at; (at = text.find("{db}")) != std::string::npos;) text.replace(at, 4, database);
  return text;
}

Result<uint32_t> storedVersion(ClickHouseClient& client, const std::string& database) {
  INCISE_ASSIGN_OR_RETURN(auto rows,
                          client.query("SELECT max(version) FROM " + database + ".schema_version"));
  return static_cast<uint32_t>(std::stoul("0" + rows.substr(0, rows.find('\n'))));
}

}  // namespace

Status checkDatabaseName(const std::string& name) {
  static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
  if (std::regex_match(name, identifier)) return Status();
  return Error("database name '" + name + "': use letters, digits and '_'");
}

std::vector<std::string> fleetSchemaStatements(const std::string& database) {
  std::vector<std::string> statements;
  for (const char* statement : kStatements) statements.push_back(withDatabase(statement, database));
  return statements;
}

Status initFleetSchema(ClickHouseClient& client, const std::string& database) {
  INCISE_RETURN_IF_ERROR(checkDatabaseName(database));
  for (const std::string& statement : fleetSchemaStatements(database)) {
    INCISE_RETURN_IF_ERROR(client.query(statement));
  }
  auto version = storedVersion(client, database);
  if (!version) return version.error();
  if (*version == kFleetSchemaVersion) return Status();
  // Versions 1 to 4 lack only tables the statements above created
  // (lock_site_times, latency_times, sample_contexts, alloc_sites).
  if (*version > kFleetSchemaVersion) {
    return Error("database " + database + " holds fleet schema version " +
                 std::to_string(*version) + "; this incise writes version " +
                 std::to_string(kFleetSchemaVersion));
  }
  auto recorded = client.query("INSERT INTO " + database + ".schema_version VALUES (" +
                               std::to_string(kFleetSchemaVersion) + ", now())");
  return recorded.status();
}

Status checkFleetSchema(ClickHouseClient& client, const std::string& database) {
  INCISE_RETURN_IF_ERROR(checkDatabaseName(database));
  auto version = storedVersion(client, database);
  if (!version) {
    if (version.error().code() == ErrorCode::kNotFound) {
      return Error("no fleet archive in database " + database + " at " + client.url() +
                   ": run incise archive init --clickhouse " + client.url() + " first");
    }
    return version.error();
  }
  if (*version != kFleetSchemaVersion) {
    return Error("database " + database + " at " + client.url() + " holds fleet schema version " +
                 std::to_string(*version) + ", expected " + std::to_string(kFleetSchemaVersion) +
                 " (run incise archive init)");
  }
  return Status();
}

}  // namespace incise::analyzer
