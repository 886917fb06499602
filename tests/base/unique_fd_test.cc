#include "base/unique_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <utility>

namespace incise {
namespace {

bool isOpen(int fd) {
  return fcntl(fd, F_GETFD) != -1;
}

TEST(UniqueFd, ClosesWhenTheOwnerGoesAndHandsOnWhenReleased) {
  int raw = -1;
  {
    UniqueFd fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd);
    raw = fd.get();
    UniqueFd moved = std::move(fd);
    EXPECT_FALSE(fd);
    EXPECT_EQ(moved.get(), raw);
    EXPECT_TRUE(isOpen(raw));
  }
  EXPECT_FALSE(isOpen(raw));

  UniqueFd kept(open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int released = kept.release();
  EXPECT_FALSE(kept);
  EXPECT_TRUE(isOpen(released));
  kept.reset(released);
  kept.reset();
  EXPECT_FALSE(isOpen(released));
}

}  // namespace
}  // namespace incise
