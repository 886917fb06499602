// Adding to an archive: the index round-trips, a re-add is recognised, and
// an add killed at any step leaves an index that loads (old or new, never
// broken) and an archive the next add repairs.
#include "analyzer/archive/archive_add.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analyzer/archive/archive_index.h"
#include "tests/analyzer/archive/archive_test_traces.h"

namespace incise::analyzer {
namespace {

using testing::ScratchDir;
using testing::writeArchiveTrace;

size_t filesStartingWith(const std::string& dir, const std::string& prefix) {
  size_t n = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    n += f.path().filename().string().rfind(prefix, 0) == 0;
  }
  return n;
}

TEST(ArchiveAdd, AddsAndRecognisesTheSameTraceAgain) {
  ScratchDir scratch;
  std::string archive = scratch.path() + "/a";
  std::string trace = writeArchiveTrace(scratch.path() + "/t1", {"db1", {"server"}, 10, "b1"});
  ASSERT_FALSE(trace.empty());
  auto first = addToArchive(archive, trace, {{"release", "1.0"}});
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_FALSE(first->already_present);
  EXPECT_EQ(first->entry.id.size(), 16u);
  auto again = addToArchive(archive, trace, {{"env", "prod"}});
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_TRUE(again->already_present);
  EXPECT_EQ(again->entry.id, first->entry.id);
  auto entries = loadArchiveIndex(archive);
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].tags,
            (std::map<std::string, std::string>{{"env", "prod"}, {"release", "1.0"}}));
  EXPECT_EQ(filesStartingWith(archive, ".add-"), 0u);  // no temporary left behind
  EXPECT_EQ(filesStartingWith(archive, ".index.json.tmp"), 0u);
}

TEST(ArchiveAdd, RejectsWhatIsNotATrace) {
  ScratchDir scratch;
  std::string junk = scratch.path() + "/junk";
  std::ofstream(junk) << "not a trace";
  EXPECT_FALSE(addToArchive(scratch.path() + "/a", junk, {}));
  EXPECT_FALSE(addToArchive(scratch.path() + "/a", scratch.path() + "/missing", {}));
  EXPECT_FALSE(std::filesystem::exists(scratch.path() + "/a/index.json"));
}

TEST(ArchiveIndex, DamagedIndexIsAnErrorNotACrash) {
  ScratchDir scratch;
  std::ofstream(scratch.path() + "/index.json") << "{\"format\": \"incise-archive\", \"traces\": [";
  auto loaded = loadArchiveIndex(scratch.path());
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message().find("index.json"), std::string::npos);
  std::ofstream(scratch.path() + "/index.json")
      << R"({"format": "incise-archive", "version": 1, "traces": [{"id": "x", "file": "../etc"}]})";
  EXPECT_FALSE(loadArchiveIndex(scratch.path()));
  EXPECT_FALSE(loadArchiveIndex(scratch.path() + "/nonexistent"));
}

// A child process adds a trace and is SIGKILLed right after `step`.
class KilledAdd : public ::testing::TestWithParam<const char*> {};

TEST_P(KilledAdd, LeavesAReadableIndex) {
  const std::string step = GetParam();
  ScratchDir scratch;
  std::string archive = scratch.path() + "/a";
  std::string old_trace = writeArchiveTrace(scratch.path() + "/old", {"db1", {"server"}, 10, "b1"});
  std::string new_trace = writeArchiveTrace(scratch.path() + "/new", {"db1", {"server"}, 20, "b2"});
  ASSERT_FALSE(old_trace.empty() || new_trace.empty());
  ASSERT_TRUE(addToArchive(archive, old_trace, {}));

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto added = addToArchive(archive, new_trace, {{"release", "2"}}, [&](const char* done) {
      if (step == done) raise(SIGKILL);
    });
    _exit(added ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "child was not killed at " << step;

  auto entries = loadArchiveIndex(archive);
  ASSERT_TRUE(entries) << entries.error().message();
  bool index_replaced = step == "renamed";
  ASSERT_EQ(entries->size(), index_replaced ? 2u : 1u);
  for (const ArchiveEntry& e : *entries) {
    EXPECT_TRUE(std::filesystem::exists(archive + "/" + e.file)) << e.file;
  }

  // The next add completes the job: one entry per trace, no duplicate.
  auto retried = addToArchive(archive, new_trace, {{"release", "2"}});
  ASSERT_TRUE(retried) << retried.error().message();
  EXPECT_EQ(retried->already_present, index_replaced);
  entries = loadArchiveIndex(archive);
  ASSERT_TRUE(entries);
  EXPECT_EQ(entries->size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, KilledAdd,
                         ::testing::Values("copied", "trace renamed", "written", "renamed"));

}  // namespace
}  // namespace incise::analyzer
