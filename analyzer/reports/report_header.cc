#include "analyzer/reports/report_header.h"

#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"
#include "analyzer/symbolize/symbolizer.h"

namespace incise::analyzer {
namespace {

std::string joinCounts(const std::map<std::string, uint64_t>& counts) {
  std::string text;
  for (const auto& [name, count] : counts) {
    if (!text.empty()) text += ", ";
    text += std::to_string(count) + " " + name;
  }
  return text.empty() ? "none" : text;
}

nlohmann::json whereJson(const Trace& trace) {
  nlohmann::json list = nlohmann::json::array();
  for (const ContextCondition& condition : trace.options().filter.where)
    list.push_back(condition.text());
  return list;
}

// "; where req=42": the --where conditions, as the report applied them.
std::string whereText(const Trace& trace) {
  std::string text;
  for (const ContextCondition& condition : trace.options().filter.where)
    text += (text.empty() ? "; where " : " and ") + condition.text();
  return text;
}

std::string windowText(Trace& trace) {
  if (!trace.options().filter.window) return "";
  auto seconds = [&](uint64_t t) {
    return formatDurationNs(t > trace.startTime() ? t - trace.startTime() : 0);
  };
  uint64_t end = std::min(trace.window().end, trace.endTime());
  return " (window " + seconds(trace.window().start) + " .. " + seconds(end) + ")";
}

// The non-zero counters, by name: what the analysis did and could not do.
nlohmann::json countersJson(Trace& trace) {
  nlohmann::json counters = nlohmann::json::object();
  trace.forEachCounter(
      [&](std::string_view name, CounterSeverity, std::string_view, uint64_t value) {
        if (value != 0) counters[std::string(name)] = value;
      });
  return counters;
}

}  // namespace

std::vector<std::string> reportWarnings(Trace& trace, const LossSummary& losses) {
  std::vector<std::string> warnings;
  if (losses.percentLost() > 1.0) {
    warnings.push_back(formatPercent(losses.percentLost()) + "% of events were lost (" +
                       joinCounts(losses.lost_by_source) + "); figures may be low");
  }
  if (losses.damaged_chunks != 0) {
    warnings.push_back(std::to_string(losses.damaged_chunks) +
                       " damaged chunks were skipped; figures may be low");
  }
  if (losses.salvaged) {
    warnings.push_back("the trace was recovered by scanning (" +
                       trace.reader().recovery().why_scanned + "); the end may be missing");
  }
  trace.forEachCounter([&](std::string_view name, CounterSeverity severity,
                           std::string_view description, uint64_t value) {
    if (value != 0 && severity == CounterSeverity::kDataLoss) {
      warnings.push_back(std::string(name) + ": " + std::to_string(value) + " (" +
                         std::string(description) + ")");
    }
  });
  return warnings;
}

void printReportHeader(std::ostream& out, const std::string& report, Trace& trace) {
  LossSummary losses = trace.losses();
  const format::Header& header = trace.header();
  out << "incise " << report << ": " << terminalText(trace.path());
  if (!header.host.empty()) {
    out << " (host " << terminalText(header.host) << ", " << terminalText(header.kernel_release)
        << ")";
  }
  out << "\nduration " << formatDurationNs(trace.durationNs()) << windowText(trace)
      << terminalText(whereText(trace)) << "; events used: " << joinCounts(losses.used_by_kind)
      << "; lost: " << losses.lost() << " (" << formatPercent(losses.percentLost()) << "%)\n";
  for (const auto& warning : reportWarnings(trace, losses)) {
    out << "warning: " << terminalText(warning) << "\n";
  }
  out << "\n";
}

nlohmann::json reportHeaderJson(const std::string& report, Trace& trace) {
  LossSummary losses = trace.losses();
  return {
      {"report", report},
      {"trace", trace.path()},
      {"host", trace.header().host},
      {"duration_ns", trace.durationNs()},
      {"window_start_ns", trace.window().start - std::min(trace.window().start, trace.startTime())},
      {"where", whereJson(trace)},
      {"events_in_file", losses.rows_by_kind},
      {"events_used", losses.used_by_kind},
      {"events_lost", losses.lost_by_source},
      {"percent_lost", roundedPercent(losses.percentLost())},
      {"damaged_chunks", losses.damaged_chunks},
      {"warnings", reportWarnings(trace, losses)},
      {"counters", countersJson(trace)},
  };
}

}  // namespace incise::analyzer
