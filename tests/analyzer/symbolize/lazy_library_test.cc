#include "analyzer/symbolize/lazy_library.h"

#include <gtest/gtest.h>

#include <cmath>

namespace incise::analyzer {
namespace {

TEST(LazyLibrary, ResolvesAFunctionOfALibraryOpenedOnFirstUse) {
  LazyLibrary libm("libm.so.6");
  auto* cosine = libm.function<double (*)(double)>("cos");
  ASSERT_NE(cosine, nullptr) << libm.error();
  EXPECT_DOUBLE_EQ(cosine(0.5), std::cos(0.5));
  EXPECT_TRUE(libm.error().empty());
}

TEST(LazyLibrary, AMissingSymbolIsNullAndNamed) {
  LazyLibrary libm("libm.so.6");
  EXPECT_EQ(libm.function<void (*)()>("incise_no_such_function"), nullptr);
  EXPECT_NE(libm.error().find("incise_no_such_function"), std::string::npos) << libm.error();
  // The library itself did load: other symbols still resolve.
  EXPECT_NE(libm.function<double (*)(double)>("sin"), nullptr);
}

TEST(LazyLibrary, AMissingLibraryIsNullAndNamedEveryTime) {
  LazyLibrary missing("libincise-does-not-exist.so.7");
  EXPECT_EQ(missing.function<void (*)()>("anything"), nullptr);
  EXPECT_NE(missing.error().find("cannot load libincise-does-not-exist.so.7"), std::string::npos)
      << missing.error();
  EXPECT_FALSE(missing.open());  // not retried, still failing
  EXPECT_EQ(missing.function<void (*)()>("anything"), nullptr);
}

}  // namespace
}  // namespace incise::analyzer
