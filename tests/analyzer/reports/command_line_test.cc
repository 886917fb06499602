// The one command line of every trace-reading subcommand
// (analyzer/cli/command_line.h): shared options, operands, --help, exit codes.
#include "analyzer/cli/command_line.h"

#include <gtest/gtest.h>

#include <sstream>

namespace incise::analyzer {
namespace {

namespace po = boost::program_options;

struct Parsed {
  std::optional<int> exit;
  std::string out, err;
  CommonOptions options;
  size_t limit = 0;
};

Parsed parse(const std::vector<std::string>& args, CommandHelp help = {.name = "top"},
             SharedOptions shared = {}) {
  std::ostringstream out, err;
  help.summary = "What top does.";
  help.examples = "  incise top app.trace\n";
  CommandLine cli(help, shared, out, err);
  cli.extra().add_options()("limit", po::value<size_t>()->default_value(40), "rows");
  Parsed parsed;
  parsed.exit = cli.parse(args);
  parsed.out = out.str();
  parsed.err = err.str();
  parsed.options = cli.options();
  if (!parsed.exit) parsed.limit = cli.values()["limit"].as<size_t>();
  return parsed;
}

TEST(CommandLine, SharedFiltersAndOutputOptions) {
  Parsed p = parse({"app.trace",   "--pid",  "7,9",         "--pid",    "11",          "--tid",
                    "12",          "--cpu",  "1",           "--comm",   "worker,main", "--time",
                    "1.5..3",      "--json", "-o",          "out.json", "--symfs",     "/srv/root",
                    "--debug-dir", "/d1",    "--debug-dir", "/d2",      "--threads",   "3",
                    "--limit",     "5"});
  ASSERT_FALSE(p.exit) << p.err;
  EXPECT_EQ(p.options.file, "app.trace");
  const Filter& f = p.options.trace.filter;
  EXPECT_EQ(f.pids, (std::set<uint32_t>{7, 9, 11}));
  EXPECT_EQ(f.tids, (std::set<uint32_t>{12}));
  EXPECT_EQ(f.cpus, (std::set<uint32_t>{1}));
  EXPECT_EQ(f.comms, (std::set<std::string>{"worker", "main"}));
  ASSERT_TRUE(f.window);
  EXPECT_EQ(f.window->start_ns, 1'500'000'000u);
  EXPECT_EQ(f.window->end_ns, 3'000'000'000u);
  EXPECT_TRUE(p.options.json);
  EXPECT_EQ(p.options.output, "out.json");
  EXPECT_EQ(p.options.trace.symfs, "/srv/root");
  EXPECT_EQ(p.options.trace.debug_dirs, (std::vector<std::string>{"/d1", "/d2"}));
  EXPECT_EQ(p.options.trace.threads, 3u);
  EXPECT_EQ(p.options.trace.names, NameStyle::kShort);
  EXPECT_EQ(p.limit, 5u);
}

TEST(CommandLine, SignaturesSelectsFullNames) {
  Parsed p = parse({"app.trace", "--signatures"});
  ASSERT_FALSE(p.exit) << p.err;
  EXPECT_EQ(p.options.trace.names, NameStyle::kSignature);
  EXPECT_TRUE(p.options.trace.filter.empty());
  EXPECT_FALSE(p.options.json);
}

TEST(CommandLine, HelpShowsUsageOptionsAndExamples) {
  Parsed p = parse({"--help"});
  ASSERT_EQ(p.exit, 0);
  EXPECT_EQ(p.out.rfind("usage: incise top FILE [OPTIONS]\n\nWhat top does.", 0), 0u) << p.out;
  for (const char* option : {"--limit", "--pid", "--time", "--signatures", "--symfs", "EXAMPLES",
                             "  incise top app.trace"}) {
    EXPECT_NE(p.out.find(option), std::string::npos) << option;
  }
  EXPECT_TRUE(p.err.empty());
}

TEST(CommandLine, UsageErrorsExitTwoAndNameTheProblem) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{}, "missing FILE"},
      {{"a.trace", "b.trace"}, "unexpected argument 'b.trace'"},
      {{"a.trace", "--pid", "12x"}, "--pid '12x'"},
      {{"a.trace", "--time", "3..1"}, "END is before START"},
      {{"a.trace", "--bogus"}, "bogus"},
      {{"a.trace", "--limit", "many"}, "limit"},
  };
  for (const auto& c : cases) {
    Parsed p = parse(c.args);
    EXPECT_EQ(p.exit, 2) << c.message;
    EXPECT_EQ(p.err.rfind("incise top: ", 0), 0u) << p.err;
    EXPECT_NE(p.err.find(c.message), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("--help"), std::string::npos) << p.err;
  }
}

TEST(CommandLine, CommandsChooseTheirOperandsAndSharedOptions) {
  Parsed diff =
      parse({"old.trace", "new.trace", "--comm", "w"},
            {.name = "diff", .operands = {"BASE", "NEW"}}, {.pid_tid = false, .cpu = false});
  ASSERT_FALSE(diff.exit) << diff.err;
  EXPECT_EQ(diff.options.files, (std::vector<std::string>{"old.trace", "new.trace"}));
  EXPECT_EQ(parse({"old.trace"}, {.name = "diff", .operands = {"BASE", "NEW"}}).exit, 2);
  Parsed no_pid = parse({"a", "b", "--pid", "3"}, {.name = "diff", .operands = {"BASE", "NEW"}},
                        {.pid_tid = false});
  EXPECT_EQ(no_pid.exit, 2);

  Parsed stored = parse({"--help"}, {.name = "check"}, storedFileOptions(false));
  ASSERT_EQ(stored.exit, 0);
  for (const char* absent : {"--pid", "--json", "--symfs", "--signatures", "--output"}) {
    EXPECT_EQ(stored.out.find(absent), std::string::npos) << absent;
  }
  EXPECT_EQ(parse({"a.trace", "--json"}, {.name = "check"}, storedFileOptions(false)).exit, 2);
  EXPECT_FALSE(parse({"a.trace", "--json"}, {.name = "info"}, storedFileOptions(true)).exit);
}

TEST(CommandLine, SharedOptionsForCommandsThatParseThemselves) {
  po::options_description options;
  SharedOptions shared{.pid_tid = false};
  addSharedOptions(options, shared);
  po::variables_map values;
  std::vector<std::string> args = {"--comm", "a,b", "--cpu", "2", "--signatures", "-o", "x.html"};
  po::store(po::command_line_parser(args).options(options).run(), values);
  po::notify(values);
  auto read = readSharedOptions(values, shared);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(read->trace.filter.comms, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(read->trace.filter.cpus, (std::set<uint32_t>{2}));
  EXPECT_EQ(read->trace.names, NameStyle::kSignature);
  EXPECT_EQ(read->output, "x.html");
}

}  // namespace
}  // namespace incise::analyzer
