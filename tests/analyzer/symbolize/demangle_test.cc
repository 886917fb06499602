#include "analyzer/symbolize/demangle.h"

#include <gtest/gtest.h>

namespace incise::analyzer {
namespace {

TEST(Demangle, CxxNames) {
  EXPECT_EQ(demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"),
            "std::vector<int, std::allocator<int> >::push_back(int const&)");
  EXPECT_EQ(demangle("_ZN6incise4mainEv"), "incise::main()");
}

TEST(Demangle, RustLegacyLosesHashAndEscapes) {
  EXPECT_EQ(demangle("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");
  EXPECT_EQ(
      demangle("_ZN49_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$Drop$GT$4drop17hfedcba9876543210E"),
      "<alloc::vec::Vec<T> as Drop>::drop");
}

TEST(Demangle, OtherNamesAreKept) {
  EXPECT_EQ(demangle("malloc"), "malloc");
  EXPECT_EQ(demangle("_Znot_really_mangled("), "_Znot_really_mangled(");
  EXPECT_EQ(demangle("_RNvCs1234_7mycrate4main"), "_RNvCs1234_7mycrate4main");
  EXPECT_EQ(demangle(""), "");
}

}  // namespace
}  // namespace incise::analyzer
