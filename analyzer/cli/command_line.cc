#include "analyzer/cli/command_line.h"

#include <climits>

#include "analyzer/analyses/context/trace_context_timelines.h"
#include "analyzer/render/salvage_notice.h"
#include "analyzer/render/terminal_text.h"
#include "options/bounded_value.h"
#include "options/option_words.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

constexpr const char* kOperandsOption = "operands";
// More decoding threads than this only cost memory (each holds decoded
// chunks): 100000 of them took 10 GB.
constexpr unsigned kMaxThreads = 256;

// The largest value of the unsigned type behind a plain po::value
// `semantic`; nullopt for anything else, and for a bounded value, which
// checks its own bounds.
std::optional<uint64_t> unsignedMax(const po::value_semantic* semantic) {
  if (dynamic_cast<const options::BoundedSemantic*>(semantic)) return std::nullopt;
  if (dynamic_cast<const po::typed_value<unsigned short>*>(semantic)) return USHRT_MAX;
  if (dynamic_cast<const po::typed_value<unsigned>*>(semantic)) return UINT_MAX;
  if (dynamic_cast<const po::typed_value<unsigned long>*>(semantic)) return ULONG_MAX;
  if (dynamic_cast<const po::typed_value<unsigned long long>*>(semantic)) return ULLONG_MAX;
  return std::nullopt;
}

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

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

}  // namespace

Result<std::set<uint32_t>> parseIdList(const std::vector<std::string>& items,
                                       const std::string& option) {
  std::set<uint32_t> ids;
  for (const auto& part : splitCommas(items)) {
    Result<uint64_t> id = options::parseWholeNumber("--" + option, part, {.max = UINT32_MAX});
    if (!id) return Error(id.error().message() + " (or a comma list of them)");
    ids.insert(static_cast<uint32_t>(*id));
  }
  return ids;
}

Status checkPlainNumbers(const po::parsed_options& parsed,
                         const po::options_description& described) {
  for (const po::option& option : parsed.options) {
    if (option.unregistered || option.string_key.empty()) continue;
    const po::option_description* description = described.find_nothrow(option.string_key, false);
    if (description == nullptr) continue;
    std::optional<uint64_t> max = unsignedMax(description->semantic().get());
    if (!max) continue;
    for (const std::string& text : option.value) {
      Result<uint64_t> number =
          options::parseWholeNumber("--" + option.string_key, text, {.max = *max});
      if (!number) return number.error();
    }
  }
  return Status::ok();
}

void addSharedOptions(po::options_description& options, const SharedOptions& shared) {
  auto add = options.add_options();
  // clang-format off
  if (shared.pid_tid) {
    add("pid", po::value<std::vector<std::string>>()->composing(), "only these processes (repeat or comma list)")
       ("tid", po::value<std::vector<std::string>>()->composing(), "only these threads");
  }
  if (shared.comm_time) {
    add("comm", po::value<std::vector<std::string>>()->composing(), "only threads or processes with this name")
       ("time", po::value<std::string>(), "only START..END, seconds from the trace start (e.g. 1.5..3, ..2)");
  }
  if (shared.where) {
    add("where", po::value<std::vector<std::string>>()->composing(),
        "only events whose thread then held one of these values of a context recorded with "
        "--context (NAME=VALUE[,VALUE...]; NAME!=VALUE: none of them; repeat: all hold)");
  }
  if (shared.cpu) add("cpu", po::value<std::vector<std::string>>()->composing(), "only these cpus");
  if (shared.json) add("json", po::bool_switch(), shared.json_help.c_str());
  if (shared.output) add("output,o", po::value<std::string>(), shared.output_help.c_str());
  if (shared.reading) {
    add("symfs", po::value<std::string>(), "look for binaries under this root")
       ("debug-dir", po::value<std::vector<std::string>>()->composing(), "extra build-id debug directory")
       ("threads", options::boundedValue<unsigned>({.max = kMaxThreads})->default_value(0),
        "decoding threads (0: one per cpu, at most 256)")
       ("signatures", po::bool_switch(), "full function names: parameter lists, return types, all template arguments");
  }
  // clang-format on
}

Result<CommonOptions> readSharedOptions(const po::variables_map& values,
                                        const SharedOptions& shared) {
  CommonOptions options;
  if (shared.json) options.json = values["json"].as<bool>();
  if (shared.output && values.count("output")) options.output = values["output"].as<std::string>();
  if (shared.reading) {
    if (values.count("symfs")) options.trace.symfs = values["symfs"].as<std::string>();
    if (values.count("debug-dir")) {
      options.trace.debug_dirs = values["debug-dir"].as<std::vector<std::string>>();
    }
    options.trace.threads = values["threads"].as<unsigned>();
    options.trace.names =
        values["signatures"].as<bool>() ? NameStyle::kSignature : NameStyle::kShort;
  }
  Filter& filter = options.trace.filter;
  for (const char* option : {"pid", "tid", "cpu"}) {
    if (!values.count(option)) continue;
    INCISE_ASSIGN_OR_RETURN(auto ids,
                            parseIdList(values[option].as<std::vector<std::string>>(), option));
    std::string name = option;
    (name == "pid" ? filter.pids : name == "tid" ? filter.tids : filter.cpus) = ids;
  }
  if (values.count("comm")) {
    for (const auto& comm : splitCommas(values["comm"].as<std::vector<std::string>>())) {
      filter.comms.insert(comm);
    }
  }
  if (values.count("time")) {
    INCISE_ASSIGN_OR_RETURN(auto window, Filter::parseTimeRange(values["time"].as<std::string>()));
    filter.window = window;
  }
  if (shared.where && values.count("where")) {
    for (const std::string& text : values["where"].as<std::vector<std::string>>()) {
      INCISE_ASSIGN_OR_RETURN(ContextCondition condition, Filter::parseWhere(text));
      filter.where.push_back(std::move(condition));
    }
  }
  return options;
}

CommandLine::CommandLine(std::string name, std::string summary, std::string examples)
    : CommandLine(CommandHelp{.name = std::move(name),
                              .summary = std::move(summary),
                              .examples = std::move(examples)},
                  SharedOptions{}) {}

CommandLine::CommandLine(CommandHelp help, SharedOptions shared, std::ostream& out,
                         std::ostream& err)
    : help_(std::move(help)),
      shared_(std::move(shared)),
      out_(out),
      err_(err),
      extra_(help_.name + " options") {}

void CommandLine::printHelp(std::ostream& out) const {
  po::options_description common("common options");
  common.add_options()("help,h", "show this help");
  addSharedOptions(common, shared_);
  out << "usage: incise " << help_.name << " " << joined(help_.operands) << " [OPTIONS]\n\n"
      << help_.summary << "\n\n";
  if (!extra_.options().empty()) out << extra_ << "\n";
  out << common << "\nEXAMPLES\n" << help_.examples;
}

int CommandLine::usageError(const std::string& message) const {
  err_ << "incise " << help_.name << ": " << terminalText(message) << "\nusage: incise "
       << help_.name << " " << joined(help_.operands) << " [OPTIONS]  (see incise " << help_.name
       << " --help)\n";
  return 2;
}

std::optional<int> CommandLine::parse(const std::vector<std::string>& args) {
  po::options_description all;
  all.add_options()("help,h", "show this help")(
      kOperandsOption, po::value<std::vector<std::string>>(), "positional operands");
  addSharedOptions(all, shared_);
  all.add(extra_);
  po::positional_options_description positional;
  positional.add(kOperandsOption, -1);
  if (Status words = options::checkOptionWords(args); !words) {
    return usageError(words.error().message());
  }
  try {
    po::parsed_options parsed =
        po::command_line_parser(args).options(all).positional(positional).run();
    if (Status numbers = checkPlainNumbers(parsed, all); !numbers) {
      return usageError(numbers.error().message());
    }
    po::store(parsed, values_);
    po::notify(values_);
  } catch (const po::error& e) {
    return usageError(e.what());
  }
  if (values_.count("help")) {
    printHelp(out_);
    return 0;
  }
  std::vector<std::string> operands;
  if (values_.count(kOperandsOption)) {
    operands = values_[kOperandsOption].as<std::vector<std::string>>();
  }
  if (operands.size() < help_.operands.size()) {
    return usageError("missing " +
                      joined(std::vector<std::string>(help_.operands.begin() + operands.size(),
                                                      help_.operands.end())));
  }
  if (operands.size() > help_.operands.size()) {
    return usageError("unexpected argument '" + operands[help_.operands.size()] + "'");
  }
  auto common = readSharedOptions(values_, shared_);
  if (!common) return usageError(common.error().message());
  options_ = common.take();
  options_.files = std::move(operands);
  if (!options_.files.empty()) options_.file = options_.files.front();
  return std::nullopt;
}

std::unique_ptr<Trace> CommandLine::openTrace() const {
  auto trace = Trace::open(options_.file, options_.trace);
  if (!trace) {
    err_ << "incise " << help_.name << ": " << terminalText(trace.error().message()) << "\n";
    return nullptr;
  }
  warnIfSalvaged((*trace)->reader());
  if (Status held = holdToWhere(**trace); !held) {
    open_failure_ = usageError(held.error().message());
    return nullptr;
  }
  return trace.take();
}

void CommandLine::warnIfSalvaged(const format::Reader& reader) const {
  if (auto notice = salvageNotice(options_.file, reader.recovery())) {
    err_ << "incise " << help_.name << ": " << *notice << "\n";
  }
}

void CommandLine::warnIfChunksDamaged(Trace& trace) const {
  if (auto notice = damagedChunksNotice(options_.file, trace.losses().damaged_chunks)) {
    err_ << "incise " << help_.name << ": " << *notice << "\n";
  }
}

}  // namespace incise::analyzer
