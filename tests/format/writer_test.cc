// Writer behaviour beyond round trips: disk-full errors are sticky and named,
// and the stack-intern table stays bounded.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include "tests/format/trace_fixture.h"

namespace incise::format {
namespace {

using test_support::TempDir;

TEST(Writer, DiskFullIsReportedByName) {
  auto writer = Writer::create("/dev/full", test_support::testHeader(), {});
  ASSERT_FALSE(writer);
  EXPECT_NE(writer.error().message().find("No space left on device"), std::string::npos)
      << writer.error().message();
  EXPECT_NE(writer.error().message().find("/dev/full"), std::string::npos);
}

// Restores the file-size limit and SIGXFSZ on scope exit.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, previous_);
  }

 private:
  rlimit saved_{};
  sighandler_t previous_{};
};

class StickyErrors : public ::testing::TestWithParam<bool> {};

TEST_P(StickyErrors, AWriteErrorIsStickyAndNamed) {
  TempDir dir;
  std::string path = dir.path("t.trace");
  FileSizeLimit limit(64 * 1024);
  auto writer = Writer::create(path, test_support::testHeader(),
                               WriterOptions{.rows_per_chunk = 1000, .background = GetParam()});
  ASSERT_TRUE(writer);
  std::mt19937_64 rng(3);
  for (uint64_t i = 0; i < 200000; ++i) {
    (*writer)->append(CpuSample{.time = i * 1000,
                                .cpu = rng() % 64,
                                .pid = rng(),
                                .tid = rng(),
                                .stack_id = 0,
                                .weight = rng()});
  }
  Status flushed = (*writer)->flush();
  ASSERT_FALSE(flushed);
  EXPECT_NE(flushed.message().find("File too large"), std::string::npos) << flushed.message();
  // Rows are still accepted (and dropped); the first error stays.
  (*writer)->append(CpuSample{.time = 1});
  EXPECT_EQ((*writer)->status().message(), flushed.message());
  Status closed = (*writer)->close(0);
  EXPECT_EQ(closed.message(), flushed.message());
}

INSTANTIATE_TEST_SUITE_P(BackgroundAndInline, StickyErrors, ::testing::Bool());

TEST(Writer, InternSaysWhichStacksAreNew) {
  TempDir dir;
  auto writer = Writer::create(dir.path("t.trace"), test_support::testHeader(),
                               WriterOptions{.rows_per_chunk = 64, .max_interned_stacks = 2});
  ASSERT_TRUE(writer);
  const std::vector<uint64_t> a{0x5555, 0x6666}, b{0x7777}, c{0x8888};
  InternedStack first = (*writer)->intern(a);
  EXPECT_TRUE(first.is_new);
  InternedStack repeat = (*writer)->intern(a);
  EXPECT_EQ(repeat.id, first.id);
  EXPECT_FALSE(repeat.is_new);
  EXPECT_TRUE((*writer)->intern(b).is_new);
  EXPECT_FALSE((*writer)->intern(b).is_new);
  EXPECT_FALSE((*writer)->intern({}).is_new);
  EXPECT_EQ((*writer)->intern({}).id, 0u);
  // Past two stacks the table resets: `a` is written again under a new id.
  EXPECT_TRUE((*writer)->intern(c).is_new);
  InternedStack after_reset = (*writer)->intern(a);
  EXPECT_TRUE(after_reset.is_new);
  EXPECT_GT(after_reset.id, first.id);
  EXPECT_EQ((*writer)->stats().stacks, 4u);
  ASSERT_TRUE((*writer)->close(0));
}

TEST(Writer, InternTableResetsButIdsKeepIncreasing) {
  TempDir dir;
  std::string path = dir.path("t.trace");
  auto writer = Writer::create(path, test_support::testHeader(),
                               WriterOptions{.rows_per_chunk = 64, .max_interned_stacks = 100});
  ASSERT_TRUE(writer);
  auto stackOf = [](uint64_t i) {
    return std::vector<uint64_t>{0xffffffff81000000 + i, 0x5555 + i};
  };
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < 1000; ++i) ids.push_back((*writer)->internStack(stackOf(i)));
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(ids[i], i + 1);
  // Stack 999 is in the current table; stack 0 was dropped by a reset.
  EXPECT_EQ((*writer)->internStack(stackOf(999)), 1000u);
  uint64_t again = (*writer)->internStack(stackOf(0));
  EXPECT_EQ(again, 1001u);
  EXPECT_EQ((*writer)->internStack(stackOf(0)), 1001u);
  EXPECT_EQ((*writer)->stats().stacks, 1001u);
  ASSERT_TRUE((*writer)->close(0));

  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  EXPECT_EQ((*reader)->stacks().size(), 1001u);
  for (uint64_t i = 0; i < 1000; ++i) {
    auto frames = (*reader)->stacks().frames(i + 1);
    ASSERT_EQ(std::vector<uint64_t>(frames.begin(), frames.end()), stackOf(i));
  }
  auto frames = (*reader)->stacks().frames(1001);
  EXPECT_EQ(std::vector<uint64_t>(frames.begin(), frames.end()), stackOf(0));
}

TEST(Writer, StatsCountRowsBlocksAndBytes) {
  TempDir dir;
  std::string path = dir.path("t.trace");
  auto writer =
      Writer::create(path, test_support::testHeader(), WriterOptions{.rows_per_chunk = 100});
  ASSERT_TRUE(writer);
  for (uint64_t i = 0; i < 250; ++i) (*writer)->append(Lost{.time = i, .source = 1, .count = 2});
  ASSERT_TRUE((*writer)->flush());
  WriterStats stats = (*writer)->stats();
  EXPECT_EQ(stats.rows[static_cast<size_t>(EventKind::kLost)], 250u);
  EXPECT_EQ(stats.blocks, 4u);  // header + 3 chunks
  EXPECT_EQ(stats.bytes_written, test_support::readFile(path).size());
  EXPECT_GE(stats.raw_column_bytes, stats.stored_column_bytes);
  ASSERT_TRUE((*writer)->close(0));
  EXPECT_FALSE((*writer)->flush());
}

}  // namespace
}  // namespace incise::format
