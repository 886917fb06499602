// incise latency: per traced function, syscall, block device and io_uring
// opcode, the calls, total time, p50/p90/p99/max and a log2 histogram;
// --by stack splits each by caller stack; --heatmap -o FILE.html draws a heat
// map (time x latency) per function. The statistics are
// reports/latency_stats.h's, the heat maps reports/latency_heatmap.h's.
#include <fstream>
#include <iostream>

#include "analyzer/analyses/context/trace_context_timelines.h"
#include "analyzer/analyses/latency/latency_heatmap.h"
#include "analyzer/analyses/latency/latency_names.h"
#include "analyzer/analyses/latency/latency_stats.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/model/stack_namer.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/heat_map.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"
#include "analyzer/reports/group_columns.h"
#include "analyzer/reports/log2_histogram_chart.h"
#include "analyzer/reports/report_header.h"
#include "analyzer/reports/stack_text.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

// --by name | stack | context:NAME.
Result<LatencyGrouping> parseGrouping(const std::string& text) {
  if (text == "name") return LatencyGrouping::kByName;
  if (text == "stack") return LatencyGrouping::kByStack;
  if (contextGrouping(text)) return LatencyGrouping::kByContext;
  return Error("--by " + text + ": expected name, stack or context:NAME");
}

std::string summaryLine(const LatencyGroupStats& g) {
  return formatCount(g.count) + " calls, total " + formatDurationNs(g.total_ns) + ", p50 " +
         formatDurationNs(g.p50_ns) + ", p99 " + formatDurationNs(g.p99_ns) + ", max " +
         formatDurationNs(g.max_ns);
}

}  // namespace

int runLatency(const std::vector<std::string>& args) {
  CommandLine cli(
      "latency",
      "Latency of traced functions, syscalls, block I/O and io_uring requests (recorded with\n"
      "incise-record --trace, --syscalls, --block-io, --io-uring): per function, syscall,\n"
      "device and opcode the calls, total time, p50/p90/p99/max and a log2 histogram.\n"
      "--by stack splits each by the caller's stack at the start. --heatmap -o FILE.html\n"
      "writes one interactive heat map per function: time left to right, latency (log2\n"
      "buckets) bottom to top, colour = calls. Traces recorded with --sample N count each\n"
      "row N times (estimated counts); with --aggregate percentiles are log2 bucket bounds.\n"
      "--where keeps the calls whose thread held the values at their start (aggregated\n"
      "buckets have no thread: none are kept); --by context:NAME splits each by that value\n"
      "(aggregated buckets: unknown, '-').",
      "  incise latency app.trace\n"
      "  incise latency app.trace --by stack --limit 5\n"
      "  incise latency app.trace --json\n"
      "  incise latency app.trace --heatmap -o latency.html\n"
      "  incise latency app.trace --where req=42      # one request's calls (--context)\n"
      "  incise latency app.trace --by context:req    # each function's calls per request\n");
  cli.extra().add_options()("by", po::value<std::string>()->default_value("name"),
                            "group by: name (function, syscall, device, opcode), stack, or "
                            "context:NAME (the value of --context NAME=... at the call's start)")(
      "limit", po::value<size_t>()->default_value(30), "groups to print (0: all)")(
      "heatmap", po::bool_switch(), "write latency heat maps as HTML (needs -o FILE.html)");
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  Result<LatencyGrouping> grouping = parseGrouping(cli.values()["by"].as<std::string>());
  if (!grouping) return cli.usageError(grouping.error().message());
  bool heatmap = cli.values()["heatmap"].as<bool>();
  if (heatmap && cli.options().output.empty())
    return cli.usageError("--heatmap writes HTML: give -o FILE.html");
  if (heatmap && cli.options().json) return cli.usageError("--heatmap and --json cannot combine");
  size_t limit = cli.values()["limit"].as<size_t>();
  std::unique_ptr<Trace> trace = cli.openTrace();
  if (!trace) return cli.openFailure();
  const std::string& by = cli.values()["by"].as<std::string>();
  std::optional<ContextTimeline> timeline;
  if (std::optional<std::string> context = contextGrouping(by)) {
    Result<ContextTimeline> read = readContextTimeline(*trace, *context);
    if (!read) return cli.usageError("--by " + by + ": " + read.error().message());
    timeline = read.take();
  }

  LatencyNames names(trace->reader().metadata());
  LatencyStatsBuilder stats(*grouping);
  uint64_t window_end = std::min(trace->window().end, trace->endTime());
  LatencyHeatMapBuilder heat(std::max(trace->window().start, trace->startTime()), window_end + 1,
                             trace->startTime());
  trace->forEachRow<format::Latency>([&](const format::Latency& row) {
    stats.add(
        row, timeline ? timeline->valueAt(static_cast<uint32_t>(row.tid), row.time) : std::nullopt);
    if (heatmap) heat.add(row);
  });
  trace->forEachRow<format::LatencyHistogram>([&](const format::LatencyHistogram& row) {
    stats.add(row);
    if (heatmap) heat.add(row);
  });
  std::vector<LatencyGroupStats> groups = stats.finish();
  size_t shown = limit == 0 ? groups.size() : std::min(limit, groups.size());

  if (heatmap) {
    std::vector<LatencyHeatMapBuilder::Key> order;
    std::map<LatencyHeatMapBuilder::Key, std::string> summaries;
    for (const LatencyGroupStats& g : groups) order.push_back({g.source, g.probe, g.detail});
    for (const LatencyGroupStats& g : groups)
      if (g.stack_id == 0 && g.pid == 0) summaries[{g.source, g.probe, g.detail}] = summaryLine(g);
    std::vector<HeatMap> maps = heat.finish(names, order, [&](const auto& key) {
      auto it = summaries.find(key);
      return it == summaries.end() ? std::string() : it->second;
    });
    int status = writeReport(
        cli, [&](std::ostream& out) { writeHeatMapsHtml(maps, trace->path() + ": latency", out); });
    if (status == 0)
      std::cout << "wrote " << maps.size() << " heat map" << (maps.size() == 1 ? "" : "s") << " to "
                << cli.options().output << "\n";
    return status;
  }

  StackNamer namer(*trace, FrameGrouping::kFunction);
  auto stackNames = [&](const LatencyGroupStats& g) {
    return namer.rootFirstNames(static_cast<uint32_t>(g.pid), g.stack_id, g.first_time);
  };
  return writeReport(cli, [&](std::ostream& out) {
    if (cli.options().json) {
      nlohmann::json rows = nlohmann::json::array();
      for (size_t i = 0; i < shown; ++i) {
        const LatencyGroupStats& g = groups[i];
        nlohmann::json row = {{"name", names.name(g.source, g.probe, g.detail)},
                              {"kind", format::latencySourceName(g.source)},
                              {"probe", g.probe},
                              {"count", g.count},
                              {"total_ns", g.total_ns},
                              {"p50_ns", g.p50_ns},
                              {"p90_ns", g.p90_ns},
                              {"p99_ns", g.p99_ns},
                              {"max_ns", g.max_ns},
                              {"exact_percentiles", g.exact_percentiles},
                              {"percentiles_from_buckets", g.from_buckets},
                              {"sampled", g.sampled},
                              {"errors", g.errors},
                              {"histogram", log2HistogramJson(g.histogram)}};
        std::string object = names.object(g.source, g.probe);
        if (!object.empty()) row["object"] = object;
        if (g.source == static_cast<uint64_t>(format::LatencySource::kBlockIo))
          row["bytes"] = g.bytes;
        if (*grouping == LatencyGrouping::kByStack) {
          row["pid"] = g.pid;
          row["frames"] = stackNames(g);
        }
        if (*grouping == LatencyGrouping::kByContext)
          row["value"] = contextValueJson(timeline->text(), g.value);
        rows.push_back(std::move(row));
      }
      writeJson(out,
                {{"header", reportHeaderJson("latency", *trace)}, {"by", by}, {"groups", rows}});
      return;
    }
    printReportHeader(out, "latency", *trace);
    if (groups.empty()) {
      out << "no latency rows: record with incise-record --trace BIN:FUNC, --syscalls LIST,\n"
             "--block-io or --io-uring\n";
      return;
    }
    for (size_t i = 0; i < shown; ++i) {
      const LatencyGroupStats& g = groups[i];
      out << terminalText(std::string(format::latencySourceName(g.source)) + " " +
                          names.name(g.source, g.probe, g.detail));
      std::string object = names.object(g.source, g.probe);
      if (!object.empty()) out << "  (" << terminalText(object) << ")";
      out << "\n";
      if (*grouping == LatencyGrouping::kByStack)
        out << "  stack: " << terminalText(stackLine(stackNames(g))) << "\n";
      if (*grouping == LatencyGrouping::kByContext)
        out << "  " << terminalText(*contextGrouping(by)) << ": "
            << (g.value ? timeline->text().text(*g.value) : "- (unknown)") << "\n";
      Table table({{"CALLS", Align::kRight},
                   {"TOTAL", Align::kRight},
                   {"P50", Align::kRight},
                   {"P90", Align::kRight},
                   {"P99", Align::kRight},
                   {"MAX", Align::kRight},
                   {"ERRORS", Align::kRight}});
      table.addRow({formatCount(g.count) + (g.sampled ? " (est.)" : ""),
                    formatDurationNs(g.total_ns), formatDurationNs(g.p50_ns),
                    formatDurationNs(g.p90_ns), formatDurationNs(g.p99_ns),
                    formatDurationNs(g.max_ns), formatCount(g.errors)});
      table.render(out);
      if (!g.exact_percentiles)
        out << "  (percentiles "
            << (g.from_buckets ? "from log2 buckets: upper bounds)" : "within 0.8%)") << "\n";
      renderLog2Histogram(g.histogram, out, "  ", 40, "LATENCY >=");
      out << "\n";
    }
    if (shown < groups.size())
      out << (groups.size() - shown) << " more groups (--limit 0 shows all)\n";
  });
}

}  // namespace incise::analyzer
