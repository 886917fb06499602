#include "analyzer/fleet/fleet_push.h"

#include <chrono>
#include <ctime>
#include <thread>

#include "analyzer/archive/trace_id.h"
#include "analyzer/diff/trace_facts.h"
#include "analyzer/fleet/fleet_trace_rows.h"
#include "analyzer/fleet/tab_separated.h"
#include "analyzer/model/progress.h"

namespace incise::analyzer {
namespace {

constexpr const char* kPerTraceTables[] = {"samples",         "sample_contexts", "lock_intervals",
                                           "lock_site_times", "latency_times",   "off_cpu",
                                           "alloc_sites"};
constexpr auto kCleanupTimeout = std::chrono::seconds(60);

Result<uint64_t> countRows(ClickHouseClient& client, const std::string& table,
                           const std::string& trace_id) {
  auto rows =
      client.query("SELECT count() FROM " + table + " WHERE trace_id = " + sqlString(trace_id));
  if (!rows) return rows.error();
  return static_cast<uint64_t>(std::stoull("0" + rows->substr(0, rows->find('\n'))));
}

// Mutations run in the background on 18.x: wait until the rows are gone, so
// the rows pushed next are not mixed with the old ones.
Result<uint64_t> deletePartialRows(ClickHouseClient& client, const std::string& database,
                                   const std::string& trace_id) {
  uint64_t cleaned = 0;
  for (const char* name : kPerTraceTables) {
    std::string table = database + "." + name;
    auto count = countRows(client, table, trace_id);
    if (!count) return count.error();
    if (*count == 0) continue;
    ++cleaned;
    auto deleted =
        client.query("ALTER TABLE " + table + " DELETE WHERE trace_id = " + sqlString(trace_id));
    if (!deleted) return deleted.error();
    auto deadline = std::chrono::steady_clock::now() + kCleanupTimeout;
    for (;;) {
      count = countRows(client, table, trace_id);
      if (!count) return count.error();
      if (*count == 0) break;
      if (std::chrono::steady_clock::now() > deadline) {
        return Error("rows of an interrupted push of " + trace_id + " are still in " + table +
                     " after 60 s of ALTER ... DELETE");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return cleaned;
}

// Sends rows of one table in batches of `batch_rows` lines.
class TableWriter {
 public:
  TableWriter(ClickHouseClient& client, const PushOptions& options, ProgressBar& bar,
              uint64_t& sent)
      : client_(client), options_(options), bar_(bar), sent_(sent) {}

  template <typename Rows, typename Format>
  Status write(const std::string& table, const std::string& columns, const Rows& rows,
               Format format) {
    return writeEach(table, columns, [&](const auto& send) {
      for (const auto& row : rows) send(format(row));
    });
  }

  // `produce(send)` calls send(TabSeparatedRow) once per row; rows go out in
  // batches as they come, so none is held beyond its batch. After a failed
  // batch the rest are dropped and the error is returned.
  template <typename Produce>
  Status writeEach(const std::string& table, const std::string& columns, Produce produce) {
    if (options_.before_table) INCISE_RETURN_IF_ERROR(options_.before_table(table));
    std::string statement =
        "INSERT INTO " + options_.database + "." + table + " (" + columns + ") FORMAT TabSeparated";
    std::string body;
    size_t lines = 0;
    Status status;
    produce([&](const TabSeparatedRow& row) {
      if (!status) return;
      body += row.line();
      if (++lines == options_.batch_rows) status = flush(statement, body, lines);
    });
    INCISE_RETURN_IF_ERROR(status);
    return flush(statement, body, lines);
  }

 private:
  Status flush(const std::string& statement, std::string& body, size_t& lines) {
    if (lines == 0) return Status();
    INCISE_RETURN_IF_ERROR(client_.insert(statement, body));
    bar_.advance(lines);
    sent_ += lines;
    body.clear();
    lines = 0;
    return Status();
  }

  ClickHouseClient& client_;
  const PushOptions& options_;
  ProgressBar& bar_;
  uint64_t& sent_;
};

std::vector<std::string> tagTexts(const std::map<std::string, std::string>& tags) {
  std::vector<std::string> texts;
  for (const auto& [key, value] : tags) texts.push_back(key + "=" + value);
  return texts;
}

std::string programOf(const std::vector<std::string>& command) {
  if (command.empty()) return "";
  size_t slash = command.front().rfind('/');
  return slash == std::string::npos ? command.front() : command.front().substr(slash + 1);
}

TabSeparatedRow traceRow(const FleetTraceRows& rows,
                         const std::map<std::string, std::string>& tags) {
  const TraceFacts& f = rows.facts;
  std::vector<std::string> objects, ids, lost_sources;
  std::vector<uint64_t> lost_counts;
  for (const auto& [object, id] : f.build_ids) objects.push_back(object), ids.push_back(id);
  for (const auto& [source, count] : rows.lost) {
    lost_sources.push_back(source);
    lost_counts.push_back(count);
  }
  TabSeparatedRow row;
  row.add(rows.trace_id).add(f.host).add(f.kernel).add(commandText(f.command));
  row.add(programOf(f.command)).addArray(objects).addArray(ids);
  row.add(utcText(f.start_wall_ns, "%Y-%m-%d")).add(f.start_wall_ns).add(f.duration_ns);
  row.add(uint64_t{f.sample_hz}).add(rows.cpu_samples).addArray(tagTexts(tags));
  row.addArray(lost_sources)
      .addArray(lost_counts)
      .add(utcText(static_cast<uint64_t>(std::time(nullptr)) * 1'000'000'000, "%Y-%m-%d %H:%M:%S"));
  return row;
}

}  // namespace

Result<PushResult> pushTrace(ClickHouseClient& client, const std::string& path,
                             const PushOptions& options) {
  INCISE_RETURN_IF_ERROR(checkFleetSchema(client, options.database));
  PushResult result;
  INCISE_ASSIGN_OR_RETURN(auto id, traceIdOfFile(path));
  result.trace_id = id;
  INCISE_ASSIGN_OR_RETURN(auto present, countRows(client, options.database + ".traces", id));
  if (present > 0) {
    result.already_present = true;
    return result;
  }
  auto opened = FleetTrace::open(path, options.progress);
  if (!opened) return opened.error();
  FleetTrace& fleet = **opened;
  const FleetTraceRows& rows = fleet.rows();
  INCISE_ASSIGN_OR_RETURN(auto cleaned, deletePartialRows(client, options.database, rows.trace_id));
  result.cleaned_tables = cleaned;

  // Samples and lock rows first: they are streamed from the trace, and the
  // stacks they name join frames and stacks, which go after them. (The
  // total is an upper bound until they are sent: a cell per sample at most,
  // a lock interval gives one row and one or two site times.)
  ProgressBar bar("pushing " + rows.trace_id,
                  rows.rowCount() + fleet.sampleRows() + 3 * fleet.lockRows() + fleet.latencyRows(),
                  options.progress);
  TableWriter writer(client, options, bar, result.rows);
  const std::string date = utcText(rows.facts.start_wall_ns, "%Y-%m-%d");
  INCISE_RETURN_IF_ERROR(writer.writeEach(
      "samples", "trace_id, start_date, second, pid, tid, stack_key, samples, weight",
      [&](const auto& send) {
        fleet.forEachSampleCell([&](const FleetSampleCell& c) {
          TabSeparatedRow row;
          row.add(rows.trace_id).add(date).add(uint64_t{c.second}).add(uint64_t{c.pid});
          row.add(uint64_t{c.tid}).add(c.stack_key).add(c.samples).add(c.weight);
          send(row);
        });
      }));
  if (fleet.hasContexts()) {
    INCISE_RETURN_IF_ERROR(writer.writeEach(
        "sample_contexts",
        "trace_id, start_date, second, pid, tid, stack_key, samples, weight, context_names, "
        "context_values",
        [&](const auto& send) {
          fleet.forEachSampleCell([&](const FleetSampleCell& c) {
            if (c.context_names.empty()) return;
            TabSeparatedRow row;
            row.add(rows.trace_id).add(date).add(uint64_t{c.second}).add(uint64_t{c.pid});
            row.add(uint64_t{c.tid}).add(c.stack_key).add(c.samples).add(c.weight);
            row.addArray(c.context_names).addArray(c.context_values);
            send(row);
          });
        }));
  }
  INCISE_RETURN_IF_ERROR(writer.writeEach(
      "lock_intervals",
      "trace_id, start_date, time_ns, wait_ns, hold_ns, pid, tid, address, lock_kind, flags, "
      "stack_key, releaser_tid",
      [&](const auto& send) {
        fleet.forEachLockRow([&](const FleetLockRow& l) {
          TabSeparatedRow row;
          row.add(rows.trace_id).add(date).add(l.time_ns).add(l.wait_ns).add(l.hold_ns);
          row.add(uint64_t{l.pid}).add(uint64_t{l.tid}).add(l.address).add(l.lock_kind);
          row.add(uint64_t{l.flags}).add(l.stack_key).add(uint64_t{l.releaser_tid});
          send(row);
        });
      }));
  INCISE_RETURN_IF_ERROR(writer.writeEach(
      "lock_site_times", "trace_id, start_date, site, context, measure, ns, inferred",
      [&](const auto& send) {
        fleet.forEachLockSiteTime([&](const FleetLockSiteTime& t) {
          TabSeparatedRow row;
          row.add(rows.trace_id).add(date).add(t.site).add(t.context);
          row.add(t.hold ? "hold" : "wait").add(t.ns).add(uint64_t{t.inferred});
          send(row);
        });
      }));
  INCISE_RETURN_IF_ERROR(writer.writeEach(
      "latency_times",
      "trace_id, start_date, kind, name, bucket, ns, calls, total_ns, max_ns, counted",
      [&](const auto& send) {
        fleet.forEachLatencyTime([&](const FleetLatencyTime& t) {
          TabSeparatedRow row;
          row.add(rows.trace_id).add(date).add(t.kind).add(t.name).add(uint64_t{t.bucket});
          row.add(t.ns).add(t.calls).add(t.total_ns).add(t.max_ns).add(uint64_t{t.counted});
          send(row);
        });
      }));
  INCISE_RETURN_IF_ERROR(writer.write("frames", "frame_key, name, module, build_id", rows.frames,
                                      [](const FleetFrame& f) {
                                        TabSeparatedRow row;
                                        row.add(f.key).add(f.name).add(f.module).add(f.build_id);
                                        return row;
                                      }));
  INCISE_RETURN_IF_ERROR(
      writer.write("stacks", "stack_key, frame_keys, names", rows.stacks, [](const FleetStack& s) {
        TabSeparatedRow row;
        row.add(s.key).addArray(s.frame_keys).addArray(s.names);
        return row;
      }));
  INCISE_RETURN_IF_ERROR(writer.write("off_cpu",
                                      "trace_id, start_date, stack_key, reason, ns, count",
                                      rows.off_cpu, [&](const FleetOffCpuRow& o) {
                                        TabSeparatedRow row;
                                        row.add(rows.trace_id).add(date).add(o.stack_key);
                                        row.add(o.reason).add(o.ns).add(o.count);
                                        return row;
                                      }));
  INCISE_RETURN_IF_ERROR(writer.write(
      "alloc_sites",
      "trace_id, start_date, site, stack, allocated_bytes, allocated_milli, samples, live_bytes, "
      "live_milli, live_samples",
      rows.alloc_sites, [&](const AllocSite& a) {
        TabSeparatedRow row;
        row.add(rows.trace_id).add(date).add(a.site).addArray(a.root_first);
        row.add(a.totals.allocated_bytes).add(a.totals.allocated_milli).add(a.totals.samples);
        row.add(a.totals.live_bytes).add(a.totals.live_milli).add(a.totals.live_samples);
        return row;
      }));
  const std::vector<TabSeparatedRow> trace_rows = {traceRow(rows, options.tags)};
  INCISE_RETURN_IF_ERROR(writer.write(
      "traces",
      "trace_id, host, kernel, command, program, build_id_objects, build_ids, start_date, "
      "start_ns, duration_ns, sample_hz, cpu_samples, tags, lost_sources, lost_counts, pushed_at",
      trace_rows, [](const TabSeparatedRow& row) { return row; }));
  return result;
}

}  // namespace incise::analyzer
