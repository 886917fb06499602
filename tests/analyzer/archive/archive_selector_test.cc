// Selectors find the right traces in an archive built with known traces.
#include "analyzer/archive/archive_selector.h"
#include "base/hex.h"

#include <gtest/gtest.h>

#include "analyzer/archive/archive_add.h"
#include "analyzer/diff/trace_facts.h"
#include "tests/analyzer/archive/archive_test_traces.h"

namespace incise::analyzer {
namespace {

using testing::ScratchDir;
using testing::TraceHeader;
using testing::writeArchiveTrace;

class ArchiveSelectors : public ::testing::Test {
 protected:
  void SetUp() override {
    add({"db1", {"/usr/bin/server", "--port", "80"}, 1000, "bid-v13", 3}, {{"release", "1.3"}});
    add({"db1", {"/usr/bin/server", "--port", "80"}, 3000, "bid-v14", 4}, {{"release", "1.4"}});
    add({"db2", {"/usr/bin/server"}, 2000, "bid-v14", 5}, {{"release", "1.4"}, {"env", "staging"}});
    add({"db1", {"/opt/batch"}, 4000, "bid-batch", 6}, {});
    auto loaded = loadArchiveIndex(dir_.path() + "/archive");
    ASSERT_TRUE(loaded) << loaded.error().message();
    entries_ = *loaded;
    ASSERT_EQ(entries_.size(), 4u);
  }

  void add(const TraceHeader& header, const std::map<std::string, std::string>& tags) {
    std::string path =
        writeArchiveTrace(dir_.path() + "/in-" + std::to_string(ids_.size()), header);
    ASSERT_FALSE(path.empty());
    auto added = addToArchive(dir_.path() + "/archive", path, tags);
    ASSERT_TRUE(added) << added.error().message();
    ids_.push_back(added->entry.id);
  }

  // The index (0..3, in the order added) of what `text` resolves to.
  int pick(const std::string& text, std::string* note = nullptr) {
    auto selector = parseSelector(text);
    EXPECT_TRUE(selector) << selector.error().message();
    if (!selector) return -1;
    auto chosen = resolveSelector(entries_, *selector);
    if (!chosen) return -1;
    if (note) *note = chosen->note;
    for (size_t i = 0; i < ids_.size(); ++i) {
      if (ids_[i] == chosen->entry->id) return static_cast<int>(i);
    }
    return -2;
  }

  ScratchDir dir_;
  std::vector<std::string> ids_;
  std::vector<ArchiveEntry> entries_;
};

TEST_F(ArchiveSelectors, IndexHoldsTheFacts) {
  const ArchiveEntry& e = entries_[1];
  EXPECT_EQ(e.host, "db1");
  EXPECT_EQ(e.kernel, "6.1.0-test");
  EXPECT_EQ(e.command, (std::vector<std::string>{"/usr/bin/server", "--port", "80"}));
  EXPECT_EQ(e.start_wall_ns, 3000'000'000'000ull);
  EXPECT_EQ(e.duration_ns, 2'000'000'000u);
  EXPECT_EQ(e.samples, 4u);
  EXPECT_EQ(e.build_ids.at("/usr/bin/server"), hexBytes("bid-v14"));
  EXPECT_EQ(e.tags.at("release"), "1.4");
  EXPECT_EQ(e.file, e.id + ".trace");
  EXPECT_TRUE(std::filesystem::exists(dir_.path() + "/archive/" + e.file));
}

TEST_F(ArchiveSelectors, ByTagHostCommandAndBuildId) {
  EXPECT_EQ(pick("release=1.3"), 0);
  EXPECT_EQ(pick("release=1.4,env=staging"), 2);
  EXPECT_EQ(pick("host=db2"), 2);
  EXPECT_EQ(pick("cmd=batch"), 3);
  EXPECT_EQ(pick("cmd=/usr/bin/server --port 80,release=1.4"), 1);
  EXPECT_EQ(pick("build-id=" + hexBytes("bid-v13")), 0);
  EXPECT_EQ(pick("build-id=" + hexBytes("bid-b")), 3);  // a prefix of bid-batch only
  EXPECT_EQ(pick("host=db3"), -1);
  EXPECT_EQ(pick("release=1.3,host=db2"), -1);
}

TEST_F(ArchiveSelectors, SeveralMatchesPickTheLatestAndSaySo) {
  std::string note;
  EXPECT_EQ(pick("release=1.4", &note), 1);  // started at 3000 s, after db2's 2000 s
  EXPECT_NE(note.find("matched 2 traces"), std::string::npos) << note;
  EXPECT_NE(note.find(ids_[1]), std::string::npos) << note;
  EXPECT_EQ(pick("cmd=server", &note), 1);
  EXPECT_NE(note.find("matched 3 traces"), std::string::npos) << note;
  EXPECT_EQ(pick("latest"), 3);
  EXPECT_EQ(pick("host=db1,latest"), 3);
  note.clear();
  EXPECT_EQ(pick("release=1.3", &note), 0);
  EXPECT_TRUE(note.empty());
}

TEST_F(ArchiveSelectors, ById) {
  EXPECT_EQ(pick(ids_[2]), 2);
  EXPECT_EQ(pick(ids_[2].substr(0, 10)), 2);
  EXPECT_EQ(pick("id=" + ids_[0]), 0);
}

// Start times in the fixture: 1000, 3000, 2000, 4000 s after the epoch.
TEST_F(ArchiveSelectors, ByStartTime) {
  EXPECT_EQ(pick("before=1970-01-01T00:40"), 2);  // 2400 s: 1000 and 2000 qualify, 2000 is later
  EXPECT_EQ(pick("after=1970-01-01T00:40"), 3);
  EXPECT_EQ(pick("after=1970-01-01T00:40,cmd=server"), 1);
  EXPECT_EQ(pick("before=1970-01-01T00:33:20"), 0);  // 2000 s exactly: strictly before
  EXPECT_EQ(pick("after=1970-01-01T00:33:20,host=db2"), 2);
  EXPECT_EQ(pick("before=1970-01-01T00:16:40"), -1);  // 1000 s: nothing started earlier
  EXPECT_EQ(pick("before=1d"), 3);                    // every fixture trace is old
  EXPECT_EQ(pick("after=1d"), -1);
  EXPECT_EQ(pick("after=1970-01-02"), -1);
  for (const char* bad : {"before=yesterday", "after=1970-13-01", "before=1970-01-01T25:00",
                          "before=7w", "after=1970-01-01T00:40x"}) {
    EXPECT_FALSE(parseSelector(bad)) << bad;
  }
}

TEST(SelectorSyntax, RejectsGarbage) {
  EXPECT_FALSE(parseSelector(""));
  EXPECT_FALSE(parseSelector("=x"));
  EXPECT_FALSE(parseSelector("not-hex-and-no-equals"));
  auto ok = parseSelector("host=a,release=");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->terms.size(), 2u);
}

}  // namespace
}  // namespace incise::analyzer
