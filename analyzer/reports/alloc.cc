// incise alloc: sampled allocations (a recording with --alloc) per call
// path and site: bytes and allocations estimated from the samples, and what
// was still allocated at the end of the recording, with its stacks: the
// leak report.
#include <algorithm>

#include "analyzer/analyses/alloc/alloc_profile.h"
#include "analyzer/analyses/alloc/alloc_sites.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/model/stack_namer.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/report_header.h"
#include "analyzer/reports/stack_text.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

nlohmann::json siteJson(const AllocSite& site) {
  return {{"site", site.site},
          {"stack", site.root_first},
          {"allocated_bytes", site.totals.allocated_bytes},
          {"live_bytes", site.totals.live_bytes},
          {"count", site.totals.allocations()},
          {"live_count", site.totals.liveAllocations()},
          {"samples", site.totals.samples},
          {"live_samples", site.totals.live_samples}};
}

std::string meanText(uint64_t sample_bytes) {
  return sample_bytes ? "one per " + formatBytes(sample_bytes) + " allocated on average"
                      : "at the rate the process was started with";
}

}  // namespace

int runAlloc(const std::vector<std::string>& args) {
  CommandLine cli(
      "alloc",
      "Allocations of a recording made with --alloc, per call path (or --by site): bytes and\n"
      "allocations, estimated from Poisson samples (a sampled allocation of SIZE bytes at a\n"
      "mean of N bytes stands for SIZE / (1 - exp(-SIZE/N)) bytes), and the bytes still\n"
      "allocated at the end of the recording (or of --time): sampled blocks never freed, the\n"
      "leak report. A site is the function that called the allocator (operator new, strdup\n"
      "and std::allocator are looked through). Estimates from fewer samples are rougher: a\n"
      "site's bytes have a relative error of about 1/sqrt(SAMPLES).",
      "  incise alloc app.trace\n"
      "  incise alloc app.trace --by site --limit 10\n"
      "  incise alloc app.trace --json            # rows: site, stack, allocated_bytes, "
      "live_bytes, count\n"
      "  incise alloc app.trace --pid 4242 --time 10..20\n"
      "  incise flame app.trace --live -o leaks.html   # the leaks as a flame graph\n");
  cli.extra().add_options()("limit", po::value<size_t>()->default_value(20),
                            "rows of each table (0: all)")(
      "by", po::value<std::string>()->default_value("stack"),
      "stack (a row per call path) or site (the call paths of each site merged)");
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  const size_t limit = cli.values()["limit"].as<size_t>();
  const std::string& by = cli.values()["by"].as<std::string>();
  if (by != "stack" && by != "site")
    return cli.usageError("--by '" + by + "': expected stack or site");
  std::unique_ptr<Trace> trace = cli.openTrace();
  if (!trace) return cli.openFailure();

  const AllocProfile profile = collectAllocProfile(*trace);
  StackNamer namer(*trace, FrameGrouping::kFunction);
  std::vector<AllocSite> rows = namedAllocSites(profile, namer);
  if (by == "site") rows = mergedBySite(rows);
  std::vector<const AllocSite*> live;
  for (const AllocSite& row : rows) {
    if (row.totals.live_samples != 0) live.push_back(&row);
  }
  std::stable_sort(live.begin(), live.end(), [](const AllocSite* a, const AllocSite* b) {
    return a->totals.live_bytes > b->totals.live_bytes;
  });
  auto cap = [&](size_t n) { return limit == 0 ? n : std::min(limit, n); };
  const AllocTotals& total = profile.total;

  return writeReport(cli, [&](std::ostream& out) {
    if (cli.options().json) {
      nlohmann::json site_rows = nlohmann::json::array(), live_rows = nlohmann::json::array();
      for (size_t i = 0; i < cap(rows.size()); ++i) site_rows.push_back(siteJson(rows[i]));
      for (size_t i = 0; i < cap(live.size()); ++i) live_rows.push_back(siteJson(*live[i]));
      writeJson(out, {{"header", reportHeaderJson("alloc", *trace)},
                      {"by", by},
                      {"sample_bytes", profile.sample_bytes},
                      {"allocated_bytes", total.allocated_bytes},
                      {"live_bytes", total.live_bytes},
                      {"count", total.allocations()},
                      {"live_count", total.liveAllocations()},
                      {"samples", total.samples},
                      {"live_samples", total.live_samples},
                      {"unmatched_frees", profile.unmatched_frees},
                      {"rows", site_rows},
                      {"live", live_rows}});
      return;
    }
    printReportHeader(out, "alloc", *trace);
    if (total.samples == 0) {
      out << "no sampled allocations in this trace (for the filters given): record with "
             "incise record --alloc -- CMD\n";
      return;
    }
    out << "allocated: " << formatBytes(total.allocated_bytes) << " in "
        << formatCount(total.allocations()) << " allocations (estimated from "
        << formatCount(total.samples) << " samples, " << meanText(profile.sample_bytes)
        << ")\nlive at the end: " << formatBytes(total.live_bytes) << " in "
        << formatCount(total.liveAllocations()) << " allocations ("
        << formatCount(total.live_samples) << " sampled blocks never freed)\n";
    if (profile.unmatched_frees != 0)
      out << "note: " << formatCount(profile.unmatched_frees)
          << " frees of sampled blocks allocated before the recording or outside the filters\n";
    out << "\n";
    Table allocated({{"ALLOCATED", Align::kRight},
                     {"%", Align::kRight},
                     {"COUNT", Align::kRight},
                     {"LIVE", Align::kRight},
                     {"SAMPLES", Align::kRight},
                     {"SITE", Align::kLeft, 40},
                     {"STACK (leaf first)", Align::kLeft, 120}});
    for (size_t i = 0; i < cap(rows.size()); ++i) {
      const AllocSite& row = rows[i];
      allocated.addRow({formatBytes(row.totals.allocated_bytes),
                        formatPercent(percentOf(row.totals.allocated_bytes, total.allocated_bytes)),
                        formatCount(row.totals.allocations()), formatBytes(row.totals.live_bytes),
                        formatCount(row.totals.samples), row.site, stackLine(row.root_first)});
    }
    allocated.render(out);
    if (live.empty()) return;
    out << "\nlive at the end (allocated and never freed while recording: the leaks, if the "
           "program had exited)\n";
    Table leaks({{"LIVE", Align::kRight},
                 {"%", Align::kRight},
                 {"COUNT", Align::kRight},
                 {"SAMPLES", Align::kRight},
                 {"SITE", Align::kLeft, 40},
                 {"STACK (leaf first)", Align::kLeft, 120}});
    for (size_t i = 0; i < cap(live.size()); ++i) {
      const AllocSite& row = *live[i];
      leaks.addRow({formatBytes(row.totals.live_bytes),
                    formatPercent(percentOf(row.totals.live_bytes, total.live_bytes)),
                    formatCount(row.totals.liveAllocations()), formatCount(row.totals.live_samples),
                    row.site, stackLine(row.root_first)});
    }
    leaks.render(out);
  });
}

}  // namespace incise::analyzer
