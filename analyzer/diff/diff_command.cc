// incise diff BASE NEW: what changed between two traces.
#include <iostream>

#include "analyzer/diff/diff_report.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

constexpr const char* kHelp =
    "usage: incise diff BASE NEW [OPTIONS]\n\n"
    "What changed from BASE to NEW: per function the change in self and total share of\n"
    "each trace's CPU samples (percentage points); per lock acquire site the change in\n"
    "wait and hold p50/p99; per off-CPU stack the change in blocked time per second of\n"
    "trace. First it says whether the traces compare fairly (binaries by build-id,\n"
    "durations, sample rates) and what the diff did about it. -o writes a differential\n"
    "flame graph: widths are the larger share of the two, red grew, blue shrank.\n\n";

constexpr const char* kExamples =
    "\nEXAMPLES\n"
    "  incise diff monday.trace today.trace\n"
    "  incise diff old.trace new.trace -o diff.html --limit 10\n"
    "  incise diff old.trace new.trace --comm worker --json > diff.json\n";

int usage(const std::string& message) {
  std::cerr << "incise diff: " << message << "\n(see incise diff --help)\n";
  return 2;
}

}  // namespace

int runDiff(const std::vector<std::string>& args) {
  po::options_description options("diff options");
  options.add_options()("help,h", "show this help");
  addDiffOptions(options);
  po::options_description hidden;
  hidden.add_options()("traces", po::value<std::vector<std::string>>(), "BASE NEW");
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("traces", 2);
  po::variables_map values;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), values);
    po::notify(values);
  } catch (const po::error& e) {
    return usage(e.what());
  }
  if (values.count("help")) {
    std::cout << kHelp << options << kExamples;
    return 0;
  }
  if (!values.count("traces") || values["traces"].as<std::vector<std::string>>().size() != 2) {
    return usage("expected two traces: BASE NEW");
  }
  auto diff = diffOptionsFrom(values);
  if (!diff) return usage(diff.error().message());
  const auto& traces = values["traces"].as<std::vector<std::string>>();
  diff->base_path = traces[0];
  diff->new_path = traces[1];
  return runDiffReport(*diff, std::cout);
}

}  // namespace incise::analyzer
