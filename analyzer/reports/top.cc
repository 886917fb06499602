// incise top: flat profile of on-CPU samples — self and total % per
// function (or module), most expensive first; samples of an event that is
// not a clock weigh by their period (events), and --counters adds each
// recorded counter's self and total counts per function.
#include <algorithm>
#include <iostream>

#include "analyzer/analyses/context/trace_context_timelines.h"
#include "analyzer/analyses/profile/counter_profile.h"
#include "analyzer/analyses/profile/flame_weights.h"
#include "analyzer/analyses/profile/flat_profile.h"
#include "analyzer/analyses/profile/sample_groups.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/exit_without_teardown.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/model/stack_namer.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"
#include "analyzer/reports/group_columns.h"
#include "analyzer/reports/report_header.h"

namespace incise::analyzer {
namespace po = boost::program_options;
namespace {

constexpr size_t kGroupTopFunctions = 3;  // text: a group's hottest functions

// `--by goroutine`, `--by context:NAME`: samples per group, each with its functions.
int reportGroups(CommandLine& cli, Trace& trace, const SampleGroups& profile,
                 const GroupColumns& columns, size_t limit) {
  const size_t shown = profile.groups.size();
  return exitWithoutTeardown(writeReport(cli, [&](std::ostream& out) {
    if (cli.options().json) {
      nlohmann::json rows = nlohmann::json::array();
      for (size_t i = 0; i < shown; ++i) {
        const SampleGroup& g = profile.groups[i];
        nlohmann::json functions = nlohmann::json::array();
        size_t listed = limit == 0 ? g.profile.rows.size() : std::min(limit, g.profile.rows.size());
        for (size_t f = 0; f < listed; ++f) {
          const FlatProfileRow& row = g.profile.rows[f];
          functions.push_back(
              {{"name", row.name}, {"self_samples", row.self}, {"total_samples", row.total}});
        }
        nlohmann::json group = columns.fields(g.key);
        group["samples"] = g.samples;
        group["percent"] = roundedPercent(g.percent);
        group["functions"] = functions;
        rows.push_back(group);
      }
      writeJson(out, {{"header", reportHeaderJson("top", trace)},
                      {"by", columns.by},
                      {"samples", profile.samples},
                      {columns.list + "_total", profile.total_groups},
                      {columns.list, rows}});
      return;
    }
    printReportHeader(out, "top", trace);
    out << profile.samples << " samples in " << columns.count(profile.total_groups) << " ("
        << columns.legend << ")";
    if (shown < profile.total_groups) out << "; top " << shown;
    out << "\n\n";
    std::vector<Column> headers = columns.headers;
    headers.insert(headers.end(), {{"SAMPLES", Align::kRight},
                                   {"%", Align::kRight},
                                   {"HOTTEST FUNCTIONS (self samples)", Align::kLeft, 120}});
    Table table(std::move(headers));
    for (size_t i = 0; i < shown; ++i) {
      const SampleGroup& g = profile.groups[i];
      std::string hottest;
      for (size_t f = 0; f < g.profile.rows.size() && f < kGroupTopFunctions; ++f) {
        if (g.profile.rows[f].self == 0) break;
        hottest += (f == 0 ? "" : ", ") + g.profile.rows[f].name + " " +
                   formatCount(g.profile.rows[f].self);
      }
      std::vector<std::string> cells = columns.cells(g.key);
      cells.insert(cells.end(), {formatCount(g.samples), formatPercent(g.percent), hottest});
      table.addRow(std::move(cells));
    }
    table.render(out);
  }));
}

// "PAGE-FAULTS" for a column heading.
std::string heading(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

uint64_t samplesOf(const NamedStacks& stacks) {
  uint64_t samples = 0;
  for (const WeightedStack& stack : stacks) samples += stack.events;
  return samples;
}

}  // namespace

int runTop(const std::vector<std::string>& args) {
  CommandLine cli(
      "top",
      "Flat profile of CPU samples: self % (samples whose leaf is the function) "
      "and total %\n(samples whose stack contains it, once per sample). Samples "
      "of a clock (cpu-clock,\ntask-clock) weigh alike; of any other -e event "
      "(page-faults, cycles), by their period:\nthe events they stand for. "
      "--counters adds, per function, what each --counters\ncounter of the "
      "recording counted (self and total), charged to the samples' stacks.",
      "  incise top app.trace                      # by function, top 40\n"
      "  incise top app.trace --by module          # which libraries burn CPU\n"
      "  incise top app.trace --by goroutine       # Go: CPU per goroutine\n"
      "  incise top app.trace --by context:req     # CPU per value of --context req=...\n"
      "  incise top app.trace --where req=42       # one request's functions\n"
      "  incise top app.trace --tid 4242 --time 1..2 --limit 10\n"
      "  incise top app.trace --json > top.json\n"
      "  incise top faults.trace                   # recorded with -e page-faults -c "
      "1: faults per function\n"
      "  incise top app.trace --counters --limit 0 # recorded with --counters "
      "page-faults,cs\n");
  // clang-format off
  cli.extra().add_options()
      ("by", po::value<std::string>()->default_value("function"),
       "group by function, module, line, goroutine (Go programs) or context:NAME (a context "
       "recorded with --context NAME=...: samples per value, with their functions)")
      ("limit", po::value<size_t>()->default_value(40), "rows to print (0: all)")
      ("counters", po::bool_switch(),
       "per function, the counts of the recording's --counters (self and total)");
  // clang-format on
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  size_t limit = cli.values()["limit"].as<size_t>();
  const bool with_counters = cli.values()["counters"].as<bool>();
  const std::string& by = cli.values()["by"].as<std::string>();
  if (with_counters && (by == "goroutine" || contextGrouping(by)))
    return cli.usageError("--counters: not with --by " + by);
  if (by == "goroutine") {
    std::unique_ptr<Trace> trace = cli.openTrace();
    if (!trace) return cli.openFailure();
    return reportGroups(cli, *trace,
                        computeGoroutineGroups(*trace, FrameGrouping::kFunction, limit),
                        goroutineColumns(), limit);
  }
  if (std::optional<std::string> name = contextGrouping(by)) {
    std::unique_ptr<Trace> trace = cli.openTrace();
    if (!trace) return cli.openFailure();
    Result<ContextTimeline> timeline = readContextTimeline(*trace, *name);
    if (!timeline) return cli.usageError("--by " + by + ": " + timeline.error().message());
    return reportGroups(cli, *trace,
                        computeContextGroups(*trace, *timeline, FrameGrouping::kFunction, limit),
                        contextColumns(*name, timeline->text()), limit);
  }
  auto grouping = parseFrameGrouping(by);
  if (!grouping)
    return cli.usageError("--by '" + by +
                          "': expected function, module, line, goroutine or context:NAME");

  std::unique_ptr<Trace> trace = cli.openTrace();
  if (!trace) return cli.openFailure();
  if (with_counters && trace->header().options.counters.empty())
    return cli.usageError("--counters: " + trace->path() +
                          " was recorded without incise-record --counters");
  std::vector<StackWeights> counter_weights;
  StackWeights weights = collectOnCpuWeights(*trace, with_counters ? &counter_weights : nullptr);
  StackNamer namer(*trace, *grouping);
  NamedStacks stacks = weights.named(namer);
  const uint64_t samples = samplesOf(stacks);
  FlatProfile profile = computeFlatProfile(stacks);
  CounterProfile counters = computeCounterProfile(*trace, counter_weights, namer);
  // Samples of a clock count samples; of other events, the events they stand for.
  const std::string unit = flameUnit(*trace, FlameWeighting::kOnCpu);
  const bool in_samples = unit == "samples";
  size_t shown = limit == 0 ? profile.rows.size() : std::min(limit, profile.rows.size());
  std::string what = *grouping == FrameGrouping::kModule ? "MODULE" : "FUNCTION";
  std::string fallback =
      namer.lineFallback() ? "no line information in this trace: grouped by function" : "";

  return exitWithoutTeardown(writeReport(cli, [&](std::ostream& out) {
    if (cli.options().json) {
      const std::string self_key = in_samples ? "self_samples" : "self_events";
      const std::string total_key = in_samples ? "total_samples" : "total_events";
      nlohmann::json rows = nlohmann::json::array();
      for (size_t i = 0; i < shown; ++i) {
        const auto& row = profile.rows[i];
        nlohmann::json json_row = {{"name", row.name},
                                   {self_key, row.self},
                                   {total_key, row.total},
                                   {"self_percent", roundedPercent(row.self_percent)},
                                   {"total_percent", roundedPercent(row.total_percent)}};
        if (with_counters) {
          nlohmann::json counts = nlohmann::json::object();
          std::vector<CounterCounts> of = counters.of(row.name);
          for (size_t c = 0; c < counters.names.size(); ++c)
            counts[counters.names[c]] = {{"self", of[c].self}, {"total", of[c].total}};
          json_row["counters"] = counts;
        }
        rows.push_back(json_row);
      }
      nlohmann::json doc = {{"header", reportHeaderJson("top", *trace)},
                            {"by", cli.values()["by"].as<std::string>()},
                            {"unit", unit},
                            {"samples", samples},
                            {"distinct_stacks", weights.distinct()},
                            {"rows", rows}};
      if (!in_samples) doc["events"] = profile.weight;
      if (with_counters) {
        nlohmann::json totals = nlohmann::json::object();
        for (size_t c = 0; c < counters.names.size(); ++c)
          totals[counters.names[c]] = counters.totals[c];
        doc["counters"] = totals;
      }
      if (!fallback.empty()) doc["note"] = fallback;
      writeJson(out, doc);
      return;
    }
    printReportHeader(out, "top", *trace);
    if (!fallback.empty()) out << "note: " << fallback << "\n";
    if (in_samples) {
      out << samples << " samples";
    } else {
      out << profile.weight << " " << terminalText(unit) << " (events, by sample period) in "
          << samples << " samples";
    }
    out << ", " << weights.distinct() << " distinct stacks";
    if (shown < profile.rows.size()) out << "; top " << shown << " of " << profile.rows.size();
    out << "\n";
    if (with_counters) {
      out << "counters (charged to the stack of the sample that read them):";
      for (size_t c = 0; c < counters.names.size(); ++c)
        out << (c ? ", " : " ") << terminalText(counters.names[c]) << " " << counters.totals[c];
      out << "\n";
    }
    out << "\n";
    std::vector<Column> columns = {{"SELF%", Align::kRight},
                                   {"TOTAL%", Align::kRight},
                                   {"SELF", Align::kRight},
                                   {"TOTAL", Align::kRight}};
    for (const std::string& counter : counters.names) {
      columns.push_back({heading(terminalText(counter)) + " SELF", Align::kRight});
      columns.push_back({"TOTAL", Align::kRight});
    }
    columns.push_back({what, Align::kLeft, 120});
    Table table(columns);
    for (size_t i = 0; i < shown; ++i) {
      const auto& row = profile.rows[i];
      std::vector<std::string> cells = {formatPercent(row.self_percent),
                                        formatPercent(row.total_percent), formatCount(row.self),
                                        formatCount(row.total)};
      std::vector<CounterCounts> of = counters.of(row.name);
      for (const CounterCounts& counts : of) {
        cells.push_back(formatCount(counts.self));
        cells.push_back(formatCount(counts.total));
      }
      cells.push_back(row.name);
      table.addRow(cells);
    }
    table.render(out);
  }));
}

}  // namespace incise::analyzer
