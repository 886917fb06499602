#include "analyzer/model/progress.h"

#include <gtest/gtest.h>

namespace incise::analyzer {
namespace {

TEST(ProgressTest, FormatsBarAndPercent) {
  EXPECT_EQ(ProgressBar::format("decoding", 5, 10, 10), "decoding [#####.....]  50%");
  EXPECT_EQ(ProgressBar::format("x", 20, 10, 4), "x [####] 100%");
  EXPECT_EQ(ProgressBar::format("x", 0, 0, 4), "x [####] 100%");
}

TEST(ProgressTest, CountsEvenWhenSilent) {
  ProgressBar bar("x", 100, /*enabled=*/false);
  bar.advance(30);
  bar.advance(20);
  EXPECT_EQ(bar.done(), 50u);
}

}  // namespace
}  // namespace incise::analyzer
