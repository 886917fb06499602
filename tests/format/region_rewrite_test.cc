// rewriteRegion on real files: the merged blocks in place of the region,
// the file cut after them, the index moved; and a failed copy write that
// leaves the region as it was.
#include "format/region_rewrite.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "base/unique_fd.h"
#include "format/file_layout.h"
#include "tests/format/trace_fixture.h"

namespace incise::format {
namespace {

using test_support::readFile;
using test_support::TempDir;

TEST(RegionRewrite, PutsTheMergedBlocksInPlaceAndMovesTheIndex) {
  TempDir dir;
  const std::string path = dir.path("region");
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  ASSERT_TRUE(fd);
  // 100 bytes before the region, then a 400-byte region of small blocks.
  const std::string before(100, 'h'), region(400, 's');
  ASSERT_EQ(::pwrite(fd.get(), before.data(), before.size(), 0), 100);
  ASSERT_EQ(::pwrite(fd.get(), region.data(), region.size(), 100), 400);
  std::vector<IndexEntry> index{
      {.offset = 0, .length = 90}, {.offset = 100, .length = 190}, {.offset = 300, .length = 190}};
  MergedRegion merged{.blocks = std::string(150, 'm'),
                      .entries = {{.offset = 0, .length = 60}, {.offset = 70, .length = 70}}};

  Result<RegionRewrite> done = rewriteRegion(fd.get(), path, 100, 500, merged, index);
  ASSERT_TRUE(done) << done.error().message();
  EXPECT_TRUE(done->rewritten);
  EXPECT_TRUE(done->keep_merging);
  EXPECT_EQ(done->next_offset, 250u);
  EXPECT_EQ(readFile(path), before + merged.blocks);
  ASSERT_EQ(index.size(), 3u);
  EXPECT_EQ(index[0].offset, 0u);
  EXPECT_EQ(index[1].offset, 100u);
  EXPECT_EQ(index[1].length, 60u);
  EXPECT_EQ(index[2].offset, 170u);
}

TEST(RegionRewrite, AFailedCopyLeavesTheRegionAndStopsMerging) {
  // /dev/full takes no write (ENOSPC) and cannot be cut: the error names the truncate.
  UniqueFd fd(::open("/dev/full", O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(fd);
  std::vector<IndexEntry> index{{.offset = 100, .length = 190}};
  MergedRegion merged{.blocks = std::string(150, 'm'), .entries = {{.offset = 0, .length = 140}}};
  Result<RegionRewrite> done = rewriteRegion(fd.get(), "/dev/full", 100, 500, merged, index);
  ASSERT_FALSE(done);
  EXPECT_NE(done.error().message().find("truncating /dev/full"), std::string::npos);
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index[0].offset, 100u);
}

}  // namespace
}  // namespace incise::format
