#include "analyzer/reports/report_options.h"

#include <charconv>
#include <iostream>

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {
std::vector<std::string> splitCommas(const std::vector<std::string>& items) {
  std::vector<std::string> parts;
  for (const auto& item : items) {
    size_t start = 0;
    for (;;) {
      size_t comma = item.find(',', start);
      parts.push_back(item.substr(start, comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return parts;
}
}  // namespace

Result<std::set<uint32_t>> parseIdList(const std::vector<std::string>& items,
                                       const std::string& option) {
  std::set<uint32_t> ids;
  for (const auto& part : splitCommas(items)) {
    uint32_t id = 0;
    auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), id);
    if (part.empty() || error != std::errc() || end != part.data() + part.size()) {
      return Error("--" + option + " '" + part + "': expected a number (or a comma list)");
    }
    ids.insert(id);
  }
  return ids;
}

ReportCommandLine::ReportCommandLine(std::string name, std::string summary, std::string examples)
    : name_(std::move(name)),
      summary_(std::move(summary)),
      examples_(std::move(examples)),
      common_("common options"),
      extra_(name_ + " options") {
  // clang-format off
  common_.add_options()
      ("help,h", "show this help")
      ("pid", po::value<std::vector<std::string>>()->composing(), "only these processes (repeat or comma list)")
      ("tid", po::value<std::vector<std::string>>()->composing(), "only these threads")
      ("comm", po::value<std::vector<std::string>>()->composing(), "only threads or processes with this name")
      ("cpu", po::value<std::vector<std::string>>()->composing(), "only these cpus")
      ("time", po::value<std::string>(), "only START..END, seconds from the trace start (e.g. 1.5..3, ..2)")
      ("json", po::bool_switch(), "print JSON instead of a table")
      ("output,o", po::value<std::string>(), "write to this file instead of stdout")
      ("symfs", po::value<std::string>(), "look for binaries under this root")
      ("debug-dir", po::value<std::vector<std::string>>()->composing(), "extra build-id debug directory")
      ("threads", po::value<unsigned>()->default_value(0), "decoding threads (0: one per cpu)")
      ("file", po::value<std::string>(), "trace file");
  // clang-format on
}

void ReportCommandLine::printHelp(std::ostream& out) const {
  out << "usage: incise " << name_ << " FILE [OPTIONS]\n\n"
      << summary_ << "\n\n"
      << extra_ << "\n"
      << common_ << "\nEXAMPLES\n"
      << examples_;
}

int ReportCommandLine::usageError(const std::string& message) const {
  std::cerr << "incise " << name_ << ": " << message << "\n(see incise " << name_ << " --help)\n";
  return 2;
}

std::optional<int> ReportCommandLine::parse(const std::vector<std::string>& args) {
  po::options_description all;
  all.add(common_).add(extra_);
  po::positional_options_description positional;
  positional.add("file", 1);
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), values_);
    po::notify(values_);
  } catch (const po::error& e) {
    return usageError(e.what());
  }
  if (values_.count("help")) {
    printHelp(std::cout);
    return 0;
  }
  if (!values_.count("file")) return usageError("missing the trace FILE");
  options_.file = values_["file"].as<std::string>();
  options_.json = values_["json"].as<bool>();
  if (values_.count("output")) options_.output = values_["output"].as<std::string>();
  if (values_.count("symfs")) options_.trace.symfs = values_["symfs"].as<std::string>();
  if (values_.count("debug-dir")) {
    options_.trace.debug_dirs = values_["debug-dir"].as<std::vector<std::string>>();
  }
  options_.trace.threads = values_["threads"].as<unsigned>();

  Filter& filter = options_.trace.filter;
  for (const char* option : {"pid", "tid", "cpu"}) {
    if (!values_.count(option)) continue;
    auto ids = parseIdList(values_[option].as<std::vector<std::string>>(), option);
    if (!ids) return usageError(ids.error().message());
    std::string name = option;
    (name == "pid" ? filter.pids : name == "tid" ? filter.tids : filter.cpus) = *ids;
  }
  if (values_.count("comm")) {
    for (const auto& comm : splitCommas(values_["comm"].as<std::vector<std::string>>())) {
      filter.comms.insert(comm);
    }
  }
  if (values_.count("time")) {
    auto window = Filter::parseTimeRange(values_["time"].as<std::string>());
    if (!window) return usageError(window.error().message());
    filter.window = *window;
  }
  return std::nullopt;
}

std::unique_ptr<Trace> ReportCommandLine::openTrace() const {
  auto trace = Trace::open(options_.file, options_.trace);
  if (!trace) {
    std::cerr << "incise " << name_ << ": " << trace.error().message() << "\n";
    return nullptr;
  }
  return trace.take();
}

}  // namespace incise::analyzer
