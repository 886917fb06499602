#include "analyzer/fleet/fleet_command.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "analyzer/archive/archive_add.h"
#include "analyzer/archive/archive_selector.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/diff/diff_sections.h"
#include "analyzer/diff/profile_diff.h"
#include "analyzer/fleet/clickhouse_client.h"
#include "analyzer/fleet/fleet_push.h"
#include "analyzer/fleet/fleet_queries.h"
#include "analyzer/fleet/fleet_schema.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"
#include "analyzer/reports/stack_text.h"

namespace incise::analyzer {
namespace po = boost::program_options;

const char* const kFleetArchiveUsage =
    "FLEET ARCHIVE (ClickHouse)\n"
    "usage: incise archive init --clickhouse URL [--database NAME]\n"
    "       incise archive push --clickhouse URL FILE... [--tag KEY=VALUE ...]\n"
    "       incise archive diff --clickhouse URL --base SELECTOR --new SELECTOR [--limit N] "
    "[--json]\n"
    "       incise archive top --clickhouse URL SELECTOR [--where NAME=V] [--limit N] [--json]\n\n"
    "With --clickhouse, the archive is a ClickHouse server (HTTP interface, e.g.\n"
    "http://127.0.0.1:8123/) shared by a fleet: init creates the tables (idempotent),\n"
    "push loads traces (the same file twice is stored once), diff and top compute the\n"
    "reports in SQL over every matching trace (function shares and off-CPU time: each\n"
    "trace weighted equally; lock-site and latency percentiles: waits, holds and calls\n"
    "pooled; allocation sites: bytes summed).\n"
    "--database NAME picks the database (default incise). See incise archive push --help.\n";

namespace {

constexpr const char* kExamples =

    "  incise archive init --clickhouse http://ch1:8123/\n"
    "  incise archive push --clickhouse http://ch1:8123/ app.trace --tag build=v2\n"
    "  incise archive diff --clickhouse http://ch1:8123/ --base build=v1 --new build=v2\n"
    "  incise archive top --clickhouse http://ch1:8123/ build=v2,host=db1 --json\n"
    "  incise archive top --clickhouse http://ch1:8123/ build=v2 --where req=42\n";

int usage(const std::string& message) {
  std::cerr << "incise archive: " << message << "\n(see incise archive --help)\n";
  return 2;
}

int failed(const std::string& subcommand, const std::string& message) {
  std::cerr << "incise archive " << subcommand << ": " << message << "\n";
  return 1;
}

constexpr const char* kSummary =
    "The fleet archive: a ClickHouse server (HTTP interface, e.g. http://127.0.0.1:8123/)\n"
    "shared by many hosts. init creates the tables (idempotent), push loads one trace\n"
    "(the same file twice is stored once), diff and top compute the reports of incise\n"
    "diff/top in SQL over every trace a SELECTOR matches (function shares and off-CPU\n"
    "time: each trace weighted equally; lock-site percentiles: waits and holds pooled).\n"
    "SELECTOR: KEY=VALUE[,KEY=VALUE...] with KEY host, cmd, kernel, id, build-id or a tag;\n"
    "latest narrows to the latest match. top --where NAME=V keeps the samples whose thread\n"
    "held value V of a context (traces recorded with --context NAME=...), as shares of each\n"
    "trace's such samples.\n";

// One subcommand's parsed command line: the shared --clickhouse/--database
// plus its own options.
struct FleetArgs {
  std::unique_ptr<CommandLine> cli;
  std::string url;
  std::string database;
  const po::variables_map& values() const { return cli->values(); }
};

// nullopt: go on; otherwise the exit code.
std::optional<int> parse(const std::vector<std::string>& args, const std::string& subcommand,
                         std::vector<std::string> operands, bool json,
                         const std::function<void(po::options_description&)>& add_extra,
                         FleetArgs& out, bool where = false) {
  out.cli = std::make_unique<CommandLine>(CommandHelp{.name = "archive " + subcommand,
                                                      .operands = std::move(operands),
                                                      .summary = kSummary,
                                                      .examples = kExamples},
                                          SharedOptions{.pid_tid = false,
                                                        .cpu = false,
                                                        .comm_time = false,
                                                        .where = where,
                                                        .json = json,
                                                        .output = false,
                                                        .reading = false});
  out.cli->extra().add_options()("clickhouse", po::value<std::string>(),
                                 "URL of the ClickHouse HTTP interface (required)")(
      "database", po::value<std::string>()->default_value(kDefaultFleetDatabase),
      "database holding the fleet tables");
  if (add_extra) add_extra(out.cli->extra());
  if (auto exit = out.cli->parse(args)) return exit;
  if (!out.values().count("clickhouse")) return out.cli->usageError("--clickhouse URL is required");
  out.url = out.values()["clickhouse"].as<std::string>();
  out.database = out.values()["database"].as<std::string>();
  if (auto bad = checkDatabaseName(out.database); !bad) return out.cli->usageError(bad.message());
  return std::nullopt;
}

int runInit(const std::vector<std::string>& args) {
  FleetArgs fleet;
  if (auto exit = parse(args, "init", {}, false, {}, fleet)) return *exit;
  ClickHouseClient client(fleet.url);
  Status ready = initFleetSchema(client, fleet.database);
  if (!ready) return failed("init", ready.message());
  std::cout << "fleet archive ready: database " << fleet.database << " at " << fleet.url
            << " (schema version " << kFleetSchemaVersion << ")\n";
  return 0;
}

int runPush(const std::vector<std::string>& args) {
  FleetArgs fleet;
  auto extra = [](po::options_description& options) {
    options.add_options()("tag", po::value<std::vector<std::string>>()->composing(),
                          "KEY=VALUE to find the trace by (repeat)");
  };
  if (auto exit = parse(args, "push", {"FILE"}, false, extra, fleet)) return *exit;
  PushOptions options;
  options.database = fleet.database;
  if (fleet.values().count("tag")) {
    for (const auto& text : fleet.values()["tag"].as<std::vector<std::string>>()) {
      auto tag = parseTag(text);
      if (!tag) return fleet.cli->usageError(tag.error().message());
      options.tags[tag->first] = tag->second;
    }
  }
  ClickHouseClient client(fleet.url);
  const std::string& file = fleet.cli->options().file;
  auto pushed = pushTrace(client, file, options);
  if (!pushed) return failed("push", file + ": " + pushed.error().message());
  if (pushed->already_present) {
    std::cout << file << ": already pushed as " << pushed->trace_id << ", nothing done\n";
    return 0;
  }
  std::cout << file << ": pushed as " << pushed->trace_id << " (" << pushed->rows << " rows"
            << (pushed->cleaned_tables ? ", rows of an interrupted push removed first" : "")
            << ") to " << fleet.database << " at " << fleet.url << "\n";
  return 0;
}

// The selector's traces and their profile; errors name the side.
struct Side {
  Selector selector;
  MatchedTraces matched;
  FlatProfile profile;
  std::map<std::string, FleetOffCpuPath> off_cpu;  // filled for diff only
  std::vector<LockSiteSummary> lock_sites;         // filled for diff only
  FleetLatency latency;                            // filled for diff only
  FleetAllocSites alloc_sites;                     // filled for diff only
};

Result<Side> querySide(ClickHouseClient& client, const std::string& database,
                       const std::string& text, const std::string& side,
                       const std::vector<ContextCondition>& where = {}) {
  auto selector = parseSelector(text);
  if (!selector) return selector.error().context(side);
  auto matched = queryMatchedTraces(client, database, *selector, where);
  if (!matched) return matched.error().context(side);
  auto profile = queryFunctionProfile(client, database, *selector, *matched, where);
  if (!profile) return profile.error().context(side);
  return Side{*selector, *matched, profile.take()};
}

nlohmann::json sideJson(const Side& side) {
  return {{"selector", side.selector.text},
          {"traces", side.matched.traces},
          {"traces_with_samples", side.matched.with_samples},
          {"hosts", side.matched.hosts},
          {"samples", side.matched.cpu_samples}};
}

std::string sideText(const Side& side) {
  return side.selector.text + ": " + formatCount(side.matched.traces) + " traces (" +
         formatCount(side.matched.with_samples) + " with CPU samples) from " +
         formatCount(side.matched.hosts) + " hosts, " + formatCount(side.matched.cpu_samples) +
         " samples";
}

size_t shown(size_t rows, size_t limit) {
  return limit == 0 ? rows : std::min(rows, limit);
}

constexpr const char* kPooledNote =
    "lock-site percentiles pool the waits and holds of every matching trace (a trace with "
    "more acquisitions weighs more); traces pushed before schema version 2 have no lock-site "
    "rows";

void printLockSites(const std::vector<LockSiteDelta>& rows, size_t limit) {
  std::cout << "\nlock sites: wait and hold percentiles, base -> new (pooled over the traces)\n";
  if (rows.empty()) {
    std::cout << "  no lock events in either side\n";
    return;
  }
  printLockSiteDeltas(rows, limit, std::cout);
  std::cout << "note: " << kPooledNote << "\n";
}

constexpr const char* kPooledLatencyNote =
    "latency percentiles and calls per second pool the calls and the durations of every "
    "matching trace; traces pushed before schema version 3 have no latency rows";

void printLatency(const std::vector<LatencyDelta>& rows, size_t limit) {
  if (rows.empty()) return;  // most traces time nothing: no empty section for them
  std::cout << "\nlatency per traced function, syscall, device and opcode: calls per second and "
               "percentiles, base -> new (pooled over the traces)\n";
  printLatencyDeltas(rows, limit, std::cout);
  std::cout << "note: " << kPooledLatencyNote << "\n";
}

constexpr const char* kPooledAllocNote =
    "allocation bytes and counts add up over every matching trace, bytes per second over their "
    "summed durations; traces pushed before schema version 5 have no allocation rows";

void printAllocSites(const std::vector<AllocSiteDelta>& rows, size_t limit) {
  if (rows.empty()) return;  // most traces sample no allocations: no empty section for them
  std::cout << "\nallocations per site (--alloc): bytes allocated per second of trace, and bytes "
               "still live at the end, base -> new (summed over the traces)\n";
  printAllocSiteDeltas(rows, limit, std::cout);
  std::cout << "note: " << kPooledAllocNote << "\n";
}

int runFleetDiff(const std::vector<std::string>& args) {
  FleetArgs fleet;
  auto extra = [](po::options_description& options) {
    options.add_options()("base", po::value<std::string>(), "SELECTOR: the traces before")(
        "new", po::value<std::string>(), "SELECTOR: the traces after")(
        "limit", po::value<size_t>()->default_value(20), "rows to show (0 = all)");
  };
  if (auto exit = parse(args, "diff", {}, true, extra, fleet)) return *exit;
  if (!fleet.values().count("base") || !fleet.values().count("new")) {
    return fleet.cli->usageError("diff needs --base SELECTOR and --new SELECTOR");
  }
  ClickHouseClient client(fleet.url);
  if (Status ok = checkFleetSchema(client, fleet.database); !ok)
    return failed("diff", ok.message());
  auto base = querySide(client, fleet.database, fleet.values()["base"].as<std::string>(), "--base");
  if (!base) return failed("diff", base.error().message());
  auto next = querySide(client, fleet.database, fleet.values()["new"].as<std::string>(), "--new");
  if (!next) return failed("diff", next.error().message());
  for (Side* side : {&*base, &*next}) {
    auto off_cpu = queryOffCpuProfile(client, fleet.database, side->selector, side->matched);
    if (!off_cpu) return failed("diff", off_cpu.error().message());
    side->off_cpu = off_cpu.take();
    auto lock_sites = queryLockSites(client, fleet.database, side->selector);
    if (!lock_sites) return failed("diff", lock_sites.error().message());
    side->lock_sites = lock_sites.take();
    auto latency = queryLatency(client, fleet.database, side->selector);
    if (!latency) return failed("diff", latency.error().message());
    side->latency = latency.take();
    auto alloc_sites = queryAllocSites(client, fleet.database, side->selector);
    if (!alloc_sites) return failed("diff", alloc_sites.error().message());
    side->alloc_sites = alloc_sites.take();
  }
  std::vector<AllocSiteDelta> alloc_sites =
      diffAllocSites(base->alloc_sites.rows, base->alloc_sites.window_ns, next->alloc_sites.rows,
                     next->alloc_sites.window_ns);
  std::vector<LatencyDelta> latency = diffLatency(base->latency.rows, base->latency.window_ns,
                                                  next->latency.rows, next->latency.window_ns);
  std::vector<LockSiteDelta> lock_sites = diffLockSites(base->lock_sites, next->lock_sites);
  std::vector<OffCpuDelta> off_cpu = diffFleetOffCpu(base->off_cpu, next->off_cpu);
  std::vector<FunctionDelta> rows = diffFunctions(base->profile, next->profile);
  size_t limit = fleet.values()["limit"].as<size_t>();
  if (fleet.cli->options().json) {
    writeJson(std::cout, {{"clickhouse", fleet.url},
                          {"database", fleet.database},
                          {"base", sideJson(*base)},
                          {"new", sideJson(*next)},
                          {"functions_total", rows.size()},
                          {"functions", functionDeltasJson(rows, limit)},
                          {"lock_sites_total", lock_sites.size()},
                          {"lock_sites", lockSiteDeltasJson(lock_sites, limit)},
                          {"latency_total", latency.size()},
                          {"latency", latencyDeltasJson(latency, limit)},
                          {"alloc_sites_total", alloc_sites.size()},
                          {"alloc_sites", allocSiteDeltasJson(alloc_sites, limit)},
                          {"notes", {kPooledNote, kPooledLatencyNote, kPooledAllocNote}},
                          {"off_cpu_stacks_total", off_cpu.size()},
                          {"off_cpu_stacks", offCpuDeltasJson(off_cpu, limit)}});
    return 0;
  }
  std::cout << "incise archive diff (ClickHouse " << fleet.url << ")\nbase: " << sideText(*base)
            << "\nnew:  " << sideText(*next)
            << "\n\nfunctions: share of each trace's CPU samples (%), averaged over the traces; "
               "change in percentage points\n";
  printFunctionDeltas(rows, limit, std::cout);
  printLockSites(lock_sites, limit);

  std::cout << "\noff-CPU (blocked) per stack: ms per second of trace (averaged over the traces), "
               "and total time\n";
  if (off_cpu.empty()) std::cout << "  no blocked off-CPU time in either side\n";
  printOffCpuDeltas(off_cpu, limit, std::cout);
  printLatency(latency, limit);
  printAllocSites(alloc_sites, limit);
  return 0;
}

int runFleetTop(const std::vector<std::string>& args) {
  FleetArgs fleet;
  auto extra = [](po::options_description& options) {
    options.add_options()("limit", po::value<size_t>()->default_value(20),
                          "rows to show (0 = all)");
  };
  if (auto exit = parse(args, "top", {"SELECTOR"}, true, extra, fleet, /*where=*/true))
    return *exit;
  ClickHouseClient client(fleet.url);
  if (Status ok = checkFleetSchema(client, fleet.database); !ok) return failed("top", ok.message());
  const std::vector<ContextCondition>& where = fleet.cli->options().trace.filter.where;
  auto side = querySide(client, fleet.database, fleet.cli->options().file, "selector", where);
  if (!side) return failed("top", side.error().message());
  size_t limit = fleet.values()["limit"].as<size_t>();
  const std::vector<FlatProfileRow>& rows = side->profile.rows;
  if (fleet.cli->options().json) {
    nlohmann::json list = nlohmann::json::array();
    for (size_t i = 0; i < shown(rows.size(), limit); ++i) {
      list.push_back({{"name", rows[i].name},
                      {"self_samples", rows[i].self},
                      {"total_samples", rows[i].total},
                      {"self_percent", roundedPercent(rows[i].self_percent)},
                      {"total_percent", roundedPercent(rows[i].total_percent)}});
    }
    nlohmann::json conditions = nlohmann::json::array();
    for (const ContextCondition& condition : where) conditions.push_back(condition.text());
    writeJson(std::cout, {{"clickhouse", fleet.url},
                          {"database", fleet.database},
                          {"where", conditions},
                          {"traces", sideJson(*side)},
                          {"functions_total", rows.size()},
                          {"rows", list}});
    return 0;
  }
  std::cout << "incise archive top (ClickHouse " << fleet.url << ")\n"
            << sideText(*side)
            << "\nshares of each trace's CPU samples (%), averaged over the traces";
  for (size_t i = 0; i < where.size(); ++i)
    std::cout << (i == 0 ? "; samples whose thread held " : " and ")
              << terminalText(where[i].text());
  std::cout << "\n";
  Table table({{"SELF%", Align::kRight},
               {"TOTAL%", Align::kRight},
               {"SELF", Align::kRight},
               {"TOTAL", Align::kRight},
               {"FUNCTION", Align::kLeft, 100}});
  for (size_t i = 0; i < shown(rows.size(), limit); ++i) {
    table.addRow({formatPercent(rows[i].self_percent), formatPercent(rows[i].total_percent),
                  formatCount(rows[i].self), formatCount(rows[i].total), rows[i].name});
  }
  table.render(std::cout);
  return 0;
}

bool hasClickHouseOption(const std::vector<std::string>& args) {
  for (const auto& arg : args) {
    if (arg == "--clickhouse" || arg.rfind("--clickhouse=", 0) == 0) return true;
  }
  return false;
}

}  // namespace

bool isFleetArchiveCall(const std::vector<std::string>& args) {
  if (args.empty()) return false;
  if (args[0] == "init" || args[0] == "push" || args[0] == "top") return true;
  return args[0] == "diff" && hasClickHouseOption(args);
}

int runFleetArchive(const std::vector<std::string>& args) {
  if (args.empty()) return usage("expected init, push, diff or top");
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "init") return runInit(rest);
  if (args[0] == "push") return runPush(rest);
  if (args[0] == "diff") return runFleetDiff(rest);
  if (args[0] == "top") return runFleetTop(rest);
  return usage("unknown subcommand '" + args[0] + "': expected init, push, diff or top");
}

}  // namespace incise::analyzer
