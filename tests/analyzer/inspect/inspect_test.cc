// incise info / dump / check on traces built with the writer, intact and damaged.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer/inspect/inspect.h"
#include "tests/format/trace_fixture.h"

namespace incise::analyzer {
namespace {

using format::EventKind;
using format::test_support::ExpectedTrace;
using format::test_support::TempDir;

struct CommandRun {
  int code;
  std::string out;
  std::string err;
};

CommandRun run(int (*command)(const std::vector<std::string>&, std::ostream&, std::ostream&),
               std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = command(args, out, err);
  return {code, out.str(), err.str()};
}

class Inspect : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path("t.trace");
    expected_ = format::test_support::writeRandomTrace(
        path_, 21, format::WriterOptions{.rows_per_chunk = 50}, 300);
  }
  std::string damagedCopy(size_t keep_bytes) {
    std::string bytes = format::test_support::readFile(path_);
    std::string cut = dir_.path("cut.trace");
    format::test_support::writeFile(cut, bytes.substr(0, keep_bytes));
    return cut;
  }
  TempDir dir_;
  std::string path_;
  ExpectedTrace expected_;
};

TEST_F(Inspect, InfoJsonCountsRowsAndLostEvents) {
  CommandRun r = run(info, {path_, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["host"], "testhost");
  EXPECT_EQ(j["command_line"][0], "incise-record");
  std::map<std::string, uint64_t> rows;
  for (const auto& k : j["kinds"]) rows[k["kind"]] = k["rows"];
  for (auto kind : format::kAllEventKinds) {
    EXPECT_EQ(rows[std::string(format::kindName(kind))], expected_.rows[kind].size());
  }
  EXPECT_EQ(j["processes"].size(), expected_.metadata.size());
  EXPECT_TRUE(j["recovery"]["clean"]);
  EXPECT_GT(j["compression_ratio"].get<double>(), 0.0);
  uint64_t column_bytes = 0;
  for (const auto& k : j["kinds"]) {
    for (const auto& c : k["columns"]) column_bytes += c["stored_bytes"].get<uint64_t>();
  }
  EXPECT_EQ(column_bytes, j["stored_column_bytes"].get<uint64_t>());
}

TEST(InspectLost, InfoSumsLostEventsPerSource) {
  TempDir dir;
  std::string path = dir.path("lost.trace");
  auto writer = format::Writer::create(path, format::test_support::testHeader(), {});
  ASSERT_TRUE(writer);
  using format::LostSource;
  for (auto [source, count] :
       std::vector<std::pair<LostSource, uint64_t>>{{LostSource::kCpuSamples, 5},
                                                    {LostSource::kSched, 7},
                                                    {LostSource::kSched, 8},
                                                    {LostSource::kRecorder, 1}}) {
    (*writer)->append(
        format::Lost{.time = 10, .source = static_cast<uint64_t>(source), .count = count});
  }
  ASSERT_TRUE((*writer)->close(20));
  CommandRun r = run(info, {path, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["lost"], nlohmann::json({{"cpu-samples", 5}, {"sched", 15}, {"recorder", 1}}));
  CommandRun text = run(info, {path});
  EXPECT_NE(text.out.find("sched           15"), std::string::npos) << text.out;
}

// A process described at exec and again at the end of the run (when /proc
// gives an empty command line) is one process; a pid that runs another
// program is listed again.
TEST(InspectProcesses, InfoListsEachProcessLifeOnce) {
  TempDir dir;
  std::string path = dir.path("lives.trace");
  auto writer = format::Writer::create(path, format::test_support::testHeader(), {});
  ASSERT_TRUE(writer);
  auto describe = [&](uint64_t time, std::string comm, std::vector<std::string> cmdline) {
    format::MetadataDelta delta;
    delta.time = time;
    delta.processes.push_back({42, 1, std::move(comm), std::move(cmdline), time});
    (*writer)->addMetadata(std::move(delta));
  };
  describe(10, "app", {"/bin/app", "--fast"});
  describe(20, "app", {});
  describe(30, "other", {"/bin/other"});
  ASSERT_TRUE((*writer)->close(40));
  CommandRun r = run(info, {path, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto processes = nlohmann::json::parse(r.out)["processes"];
  ASSERT_EQ(processes.size(), 2u) << processes.dump();
  EXPECT_EQ(processes[0]["comm"], "app");
  EXPECT_EQ(processes[0]["cmdline"], nlohmann::json({"/bin/app", "--fast"}));
  EXPECT_EQ(processes[1]["comm"], "other");
  CommandRun text = run(info, {path});
  EXPECT_NE(text.out.find("processes: 2"), std::string::npos) << text.out;
}

// PostgreSQL rewrites its argv in place ("postgres: checkpointer") and pads
// the rest of the old argument area with NULs, which /proc/PID/cmdline splits
// into empty arguments: info shows the command line without them.
TEST(InspectProcesses, InfoDropsTrailingEmptyArguments) {
  TempDir dir;
  std::string path = dir.path("postgres.trace");
  auto writer = format::Writer::create(path, format::test_support::testHeader(), {});
  ASSERT_TRUE(writer);
  format::MetadataDelta delta;
  delta.time = 10;
  std::vector<std::string> cmdline = {"postgres: checkpointer "};
  cmdline.resize(40);  // as read from /proc: dozens of empty strings
  delta.processes.push_back({77, 1, "postgres", cmdline, 10});
  // An empty argument before the last one is an argument: it stays.
  delta.processes.push_back({78, 1, "app", {"/bin/app", "", "--x", "", ""}, 10});
  (*writer)->addMetadata(std::move(delta));
  ASSERT_TRUE((*writer)->close(40));

  CommandRun r = run(info, {path, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto processes = nlohmann::json::parse(r.out)["processes"];
  ASSERT_EQ(processes.size(), 2u) << processes.dump();
  EXPECT_EQ(processes[0]["cmdline"], nlohmann::json({"postgres: checkpointer "}));
  EXPECT_EQ(processes[1]["cmdline"], nlohmann::json({"/bin/app", "", "--x"}));
  CommandRun text = run(info, {path});
  EXPECT_NE(text.out.find("postgres  postgres: checkpointer \n"), std::string::npos) << text.out;
}

TEST_F(Inspect, InfoTextNamesTheEssentials) {
  CommandRun r = run(info, {path_});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* needle :
       {"testhost", "6.18.0-test", "incise-record -F 999 -- ./app", "cpu_sample", "lock",
        "cpu_sample.stack_id", "compression", "integrity: clean"}) {
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
  }
}

TEST_F(Inspect, InfoReportsASalvage) {
  std::string bytes = format::test_support::readFile(path_);
  CommandRun r = run(info, {damagedCopy(bytes.size() * 2 / 3)});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("recovered by scanning"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("damage starts at offset"), std::string::npos) << r.out;
}

TEST_F(Inspect, DumpJsonLinesMatchTheRowsWritten) {
  CommandRun r = run(dump, {path_, "--kind", "lock", "--limit", "7", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  size_t n = 0;
  const format::KindSpec* spec = format::kindSpec(EventKind::kLock);
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line);
    for (uint16_t c = 0; c < spec->column_count; ++c) {
      EXPECT_EQ(j[std::string(spec->columns[c].name)].get<uint64_t>(),
                expected_.rows[EventKind::kLock][n][c]);
    }
    ++n;
  }
  EXPECT_EQ(n, 7u);
}

TEST_F(Inspect, DumpTableHasNamedColumns) {
  CommandRun r = run(dump, {path_, "--kind", "cpu_sample", "--limit", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("stack_id"), std::string::npos);
  EXPECT_NE(r.out.find(std::to_string(expected_.rows[EventKind::kCpuSample][2][0])),
            std::string::npos);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2 + 3 + 1);  // title, names, rows, blank
  // Names wider than a column stay apart.
  CommandRun locks = run(dump, {path_, "--kind", "lock", "--limit", "1"});
  ASSERT_EQ(locks.code, 0) << locks.err;
  EXPECT_NE(locks.out.find(" holder_state releaser_stack_id "), std::string::npos) << locks.out;
}

TEST_F(Inspect, DumpStacksAndMetadata) {
  CommandRun stacks = run(dump, {path_, "--kind", "stacks", "--limit", "0", "--json"});
  ASSERT_EQ(stacks.code, 0);
  EXPECT_EQ(static_cast<size_t>(std::count(stacks.out.begin(), stacks.out.end(), '\n')),
            expected_.stacks.rbegin()->first);
  CommandRun metadata = run(dump, {path_, "--kind", "metadata"});
  ASSERT_EQ(metadata.code, 0);
  EXPECT_NE(metadata.out.find("/usr/bin/app"), std::string::npos);
  EXPECT_NE(metadata.out.find("do_syscall_64"), std::string::npos);
  CommandRun unknown = run(dump, {path_, "--kind", "nonsense"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("cpu_sample"), std::string::npos);
}

TEST_F(Inspect, CheckPassesAnIntactFile) {
  CommandRun r = run(check, {path_});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok"), std::string::npos);
}

TEST_F(Inspect, CheckFindsTruncationAndSaysWhere) {
  std::string bytes = format::test_support::readFile(path_);
  CommandRun r = run(check, {damagedCopy(bytes.size() / 2)});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("DAMAGED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("damage starts at offset"), std::string::npos) << r.out;
}

TEST_F(Inspect, CheckFindsAFlippedPayloadByte) {
  std::string bytes = format::test_support::readFile(path_);
  auto reader = format::Reader::open(path_);
  ASSERT_TRUE(reader);
  auto refs = (*reader)->chunks(EventKind::kWakeup);
  ASSERT_FALSE(refs.empty());
  uint64_t at = refs[0].offset + format::kBlockHeaderSize + refs[0].length / 2;
  bytes[at] = static_cast<char>(bytes[at] ^ 0x10);
  std::string flipped = dir_.path("flipped.trace");
  format::test_support::writeFile(flipped, bytes);
  CommandRun r = run(check, {flipped});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("damage starts at offset " + std::to_string(refs[0].offset)),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("checksum mismatch"), std::string::npos) << r.out;
}

TEST(InspectInput, BadInputAndUsage) {
  TempDir dir;
  CommandRun missing = run(check, {dir.path("missing.trace")});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("No such file"), std::string::npos);
  format::test_support::writeFile(dir.path("notes.txt"), "just some text, not a trace\n");
  CommandRun text = run(info, {dir.path("notes.txt")});
  EXPECT_EQ(text.code, 1);
  EXPECT_NE(text.err.find("not an incise trace"), std::string::npos);
  EXPECT_EQ(run(dump, {}).code, 2);
  EXPECT_EQ(run(info, {"a", "--bogus"}).code, 2);
  CommandRun help = run(check, {"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("usage: incise check FILE"), std::string::npos);
  EXPECT_NE(help.out.find("EXAMPLES"), std::string::npos);
}

}  // namespace
}  // namespace incise::analyzer
