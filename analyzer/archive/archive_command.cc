// incise archive add|ls|diff: a directory of traces with an index, so a user
// finds last week's trace of the same binary and diffs it against today's.
#include <iostream>
#include <optional>

#include "analyzer/archive/archive_add.h"
#include "analyzer/archive/archive_selector.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/diff/diff_report.h"
#include "analyzer/diff/trace_facts.h"
#include "analyzer/fleet/fleet_command.h"
#include "analyzer/render/json_output.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"
#include "options/option_words.h"

namespace incise::analyzer {
namespace po = boost::program_options;

namespace {

constexpr const char* kUsage =
    "usage: incise archive add DIR FILE [--tag KEY=VALUE ...]\n"
    "       incise archive ls DIR [--tag KEY=VALUE ...] [--json]\n"
    "       incise archive diff DIR --base SELECTOR --new SELECTOR [diff options]\n\n"
    "A directory of traces with an index (DIR/index.json: id, host, kernel, command,\n"
    "build-ids, start, duration, tags). Adding is atomic: a crash leaves the index valid.\n\n"
    "SELECTOR: latest | ID (or a unique prefix) | KEY=VALUE[,KEY=VALUE...] where KEY is\n"
    "host, cmd (program name or whole command), kernel, id, build-id (a prefix), a tag,\n"
    "or before/after (start time: UTC date 2026-11-22, date-time 2026-11-22T14:30, or an\n"
    "age such as 7d, 12h, 30m). When several traces match, the latest is used and the\n"
    "report says so.\n\n"
    "EXAMPLES\n"
    "  incise archive add ~/traces app.trace --tag release=1.4 --tag env=staging\n"
    "  incise archive ls ~/traces --tag cmd=server\n"
    "  incise archive diff ~/traces --base release=1.3,cmd=server --new latest -o diff.html\n"
    "  incise archive diff ~/traces --base cmd=server,before=7d --new cmd=server,latest\n"
    "  incise archive push --clickhouse http://ch1:8123/ app.trace --tag build=v2\n"
    "  incise archive diff --clickhouse http://ch1:8123/ --base build=v1 --new build=v2\n";

int usage(const std::string& message) {
  std::cerr << "incise archive: " << terminalText(message) << "\n(see incise archive --help)\n";
  return 2;
}

// Parses `args` against `options` with `positional` names; nullopt: go on.
std::optional<int> parseArgs(const std::vector<std::string>& args,
                             const po::options_description& options,
                             const po::positional_options_description& positional,
                             po::variables_map& values) {
  if (Status words = options::checkOptionWords(args); !words) {
    return usage(words.error().message());
  }
  try {
    po::parsed_options parsed =
        po::command_line_parser(args).options(options).positional(positional).run();
    if (Status numbers = checkPlainNumbers(parsed, options); !numbers) {
      return usage(numbers.error().message());
    }
    po::store(parsed, values);
    po::notify(values);
  } catch (const po::error& e) {
    return usage(e.what());
  }
  if (values.count("help")) {
    std::cout << kUsage;
    return 0;
  }
  return std::nullopt;
}

Result<std::map<std::string, std::string>> tagsFrom(const po::variables_map& values) {
  std::map<std::string, std::string> tags;
  if (!values.count("tag")) return tags;
  for (const auto& text : values["tag"].as<std::vector<std::string>>()) {
    INCISE_ASSIGN_OR_RETURN(auto tag, parseTag(text));
    tags[tag.first] = tag.second;
  }
  return tags;
}

std::string tagsText(const std::map<std::string, std::string>& tags) {
  std::string text;
  for (const auto& [key, value] : tags) text += (text.empty() ? "" : ",") + key + "=" + value;
  return text;
}

int runAdd(const std::vector<std::string>& args) {
  po::options_description options;
  options.add_options()("help,h", "help")("tag", po::value<std::vector<std::string>>()->composing(),
                                          "KEY=VALUE")("dir", po::value<std::string>())(
      "file", po::value<std::string>());
  po::positional_options_description positional;
  positional.add("dir", 1).add("file", 1);
  po::variables_map values;
  if (auto exit = parseArgs(args, options, positional, values)) return *exit;
  if (!values.count("dir") || !values.count("file")) return usage("add needs DIR and FILE");
  auto tags = tagsFrom(values);
  if (!tags) return usage(tags.error().message());
  std::string dir = values["dir"].as<std::string>();
  auto added = addToArchive(dir, values["file"].as<std::string>(), *tags);
  if (!added) {
    std::cerr << "incise archive add: " << terminalText(added.error().message()) << "\n";
    return 1;
  }
  if (added->salvage_notice) std::cerr << "incise archive add: " << *added->salvage_notice << "\n";
  const ArchiveEntry& e = added->entry;
  std::cout << (added->already_present ? "already archived as " : "added ") << e.id << " ("
            << terminalText(e.host) << ", " << terminalText(commandText(e.command)) << ", started "
            << utcTimeText(e.start_wall_ns) << ", " << formatDurationNs(e.duration_ns) << ")"
            << (e.tags.empty() ? "" : " tags " + terminalText(tagsText(e.tags))) << " to "
            << terminalText(dir) << "\n";
  return 0;
}

int runLs(const std::vector<std::string>& args) {
  po::options_description options;
  options.add_options()("help,h", "help")("tag", po::value<std::vector<std::string>>()->composing(),
                                          "KEY=VALUE")("json", po::bool_switch(), "JSON")(
      "dir", po::value<std::string>());
  po::positional_options_description positional;
  positional.add("dir", 1);
  po::variables_map values;
  if (auto exit = parseArgs(args, options, positional, values)) return *exit;
  if (!values.count("dir")) return usage("ls needs DIR");
  std::string dir = values["dir"].as<std::string>();
  Selector filter;
  if (values.count("tag")) {
    for (const auto& text : values["tag"].as<std::vector<std::string>>()) {
      auto selector = parseSelector(text);
      if (!selector) return usage(selector.error().message());
      filter.terms.insert(filter.terms.end(), selector->terms.begin(), selector->terms.end());
    }
  }
  auto entries = loadArchiveIndex(dir);
  if (!entries) {
    std::cerr << "incise archive ls: " << terminalText(entries.error().message()) << "\n";
    return 1;
  }
  std::vector<const ArchiveEntry*> matched = selectEntries(*entries, filter);
  if (values["json"].as<bool>()) {
    nlohmann::json list = nlohmann::json::array();
    for (const ArchiveEntry* e : matched) list.push_back(entryJson(*e));
    writeJson(std::cout, {{"archive", dir}, {"total", entries->size()}, {"traces", list}});
    return 0;
  }
  Table table({{"ID", Align::kLeft},
               {"STARTED", Align::kLeft},
               {"DURATION", Align::kRight},
               {"SAMPLES", Align::kRight},
               {"HOST", Align::kLeft, 20},
               {"KERNEL", Align::kLeft, 20},
               {"TAGS", Align::kLeft, 40},
               {"COMMAND", Align::kLeft, 60}});
  for (const ArchiveEntry* e : matched) {
    table.addRow({e->id, utcTimeText(e->start_wall_ns), formatDurationNs(e->duration_ns),
                  formatCount(e->samples), e->host, e->kernel, tagsText(e->tags),
                  commandText(e->command)});
  }
  std::cout << matched.size() << " of " << entries->size() << " traces in " << terminalText(dir)
            << "\n";
  if (!matched.empty()) table.render(std::cout);
  return 0;
}

int runArchiveDiff(const std::vector<std::string>& args) {
  po::options_description options;
  options.add_options()("help,h", "help")("base", po::value<std::string>(), "SELECTOR")(
      "new", po::value<std::string>(), "SELECTOR")("dir", po::value<std::string>());
  addDiffOptions(options);
  po::positional_options_description positional;
  positional.add("dir", 1);
  po::variables_map values;
  if (auto exit = parseArgs(args, options, positional, values)) return *exit;
  if (!values.count("dir") || !values.count("base") || !values.count("new")) {
    return usage("diff needs DIR, --base SELECTOR and --new SELECTOR");
  }
  auto diff = diffOptionsFrom(values);
  if (!diff) return usage(diff.error().message());
  std::string dir = values["dir"].as<std::string>();
  auto entries = loadArchiveIndex(dir);
  if (!entries) {
    std::cerr << "incise archive diff: " << terminalText(entries.error().message()) << "\n";
    return 1;
  }
  std::string* paths[] = {&diff->base_path, &diff->new_path};
  const char* sides[] = {"base", "new"};
  for (int i = 0; i < 2; ++i) {
    auto selector = parseSelector(values[sides[i]].as<std::string>());
    if (!selector) return usage(selector.error().message());
    auto chosen = resolveSelector(*entries, *selector);
    if (!chosen) {
      std::cerr << "incise archive diff: --" << sides[i] << ": "
                << terminalText(chosen.error().message()) << "\n";
      return 1;
    }
    *paths[i] = dir + "/" + chosen->entry->file;
    if (!chosen->note.empty()) diff->notes.push_back(std::string(sides[i]) + ": " + chosen->note);
  }
  if (diff->base_path == diff->new_path) {
    diff->notes.push_back("base and new are the same trace");
  }
  return runDiffReport(*diff, std::cout);
}

}  // namespace

int runArchive(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? std::cerr : std::cout) << kUsage << "\n" << kFleetArchiveUsage;
    return args.empty() ? 2 : 0;
  }
  // --clickhouse URL: the fleet archive (analyzer/fleet); init, push and top live only there.
  if (isFleetArchiveCall(args)) return runFleetArchive(args);
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "add") return runAdd(rest);
  if (args[0] == "ls") return runLs(rest);
  if (args[0] == "diff") return runArchiveDiff(rest);
  return usage("unknown subcommand '" + args[0] +
               "': expected add, ls, diff, or init, push, top with --clickhouse");
}

}  // namespace incise::analyzer
