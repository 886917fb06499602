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

// Short names: every input below is a symbol g++ 12 or rustc 1.x emitted
// (taken from small programs with operators, lambdas, std::function and
// generics, compiled here), demangled by demangle() itself.
struct ShortCase {
  const char* mangled;
  const char* short_name;
};

class ShortNames : public ::testing::TestWithParam<ShortCase> {};

TEST_P(ShortNames, DropParametersAndReturnTypesKeepScopes) {
  const std::string full = demangle(GetParam().mangled);
  EXPECT_EQ(shortFunctionName(full), GetParam().short_name) << full;
  EXPECT_EQ(displayedFunctionName(full, NameStyle::kShort), GetParam().short_name);
  EXPECT_EQ(displayedFunctionName(full, NameStyle::kSignature), full);
  // Short names are a fixed point: shortening twice changes nothing.
  EXPECT_EQ(shortFunctionName(GetParam().short_name), GetParam().short_name);
}

INSTANTIATE_TEST_SUITE_P(
    CxxAndRust, ShortNames,
    ::testing::Values(
        // "std::vector<int, std::allocator<int> >::push_back(int&&)"
        ShortCase{"_ZNSt6vectorIiSaIiEE9push_backEOi",
                  "std::vector<int, std::allocator<int> >::push_back"},
        // operators: (), <, <<, a conversion, and a templated operator> with a return type
        ShortCase{"_ZNK3app5PointclEi", "app::Point::operator()"},
        ShortCase{"_ZNK3app5PointltERKS0_", "app::Point::operator<"},
        ShortCase{"_ZN3app5PointlsEi", "app::Point::operator<<"},
        ShortCase{"_ZNK3app5PointcvbEv", "app::Point::operator bool"},
        ShortCase{"_ZN3app5twiceIiEET_S1_", "app::twice<int>"},
        ShortCase{"_ZdlPvm", "operator delete"}, ShortCase{"_ZnwmRKSt9nothrow_t", "operator new"},
        // parentheses inside template arguments and parameters
        ShortCase{"_ZNKSt8functionIFviEEclEi", "std::function<void (int)>::operator()"},
        ShortCase{"_ZN3app8takes_fnEPFviESt8functionIS0_E", "app::takes_fn"},
        // lambdas: their own operator(), one named inside std::function's handler,
        // and one whose parameter list is too long to show
        ShortCase{"_ZZN3app3runEvENKUliE_clEi", "app::run()::{lambda(int)#1}::operator()"},
        ShortCase{"_ZNSt17_Function_handlerIFiiEZN3app3runEvEUliE_E9_M_invokeERKSt9_Any_dataOi",
                  "std::_Function_handler<int (int), app::run()::{lambda(int)#1}>::_M_invoke"},
        ShortCase{
            "_ZZN3app3runEvENKUlRKSt3mapINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES"
            "t6vectorIiSaIiEESt4lessIS6_ESaISt4pairIKS6_S9_EEESt8functionIFviEEE0_clESI_SL_",
            "app::run()::{lambda(...)#2}::operator()"},
        // a long template argument list is elided; anonymous namespaces stay
        ShortCase{
            "_ZNKSt3mapINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt6vectorIiSaIiEES"
            "t4lessIS5_ESaISt4pairIKS5_S8_EEE4sizeEv",
            "std::map<...>::size"},
        ShortCase{"_ZN3app12_GLOBAL__N_16hiddenEi", "app::(anonymous namespace)::hidden"},
        // GCC clones and thunks name code too
        ShortCase{"_Z3fooi.cold", "foo [clone .cold]"},
        ShortCase{"_ZN3app5twiceIiEET_S1_.isra.0", "app::twice<int> [clone .isra.0]"},
        ShortCase{"_ZThn8_N3app4Base3runEi", "non-virtual thunk to app::Base::run"},
        // Rust (legacy mangling): no parameter lists; trait impls and closures stay
        ShortCase{
            "_ZN52_$LT$r..Counter$u20$as$u20$core..ops..arith..Add$GT$3add17hc4662bab03082d3aE",
            "<r::Counter as core::ops::arith::Add>::add"},
        ShortCase{"_ZN1r4main28_$u7b$$u7b$closure$u7d$$u7d$17h4d61d863015b0077E",
                  "r::main::{{closure}}"},
        ShortCase{"_ZN4core3ptr114drop_in_place$LT$std..collections..hash..map..HashMap$LT$alloc.."
                  "string..String$C$alloc..vec..Vec$LT$u8$GT$$GT$$GT$17h69af908d462e65b9E",
                  "core::ptr::drop_in_place<...>"},
        // C and kernel names pass through
        ShortCase{"do_syscall_64", "do_syscall_64"}, ShortCase{"hot_a", "hot_a"}));

TEST(ShortNameEdges, TextItDoesNotUnderstandComesBackUnchanged) {
  // A function returning a function pointer, unbalanced brackets, empty text.
  EXPECT_EQ(shortFunctionName("void (*signal(int, void (*)(int)))(int)"),
            "void (*signal(int, void (*)(int)))(int)");
  EXPECT_EQ(shortFunctionName("broken<(int"), "broken<(int");
  EXPECT_EQ(shortFunctionName(""), "");
  EXPECT_EQ(shortFunctionName("LazyCompile:*fib /tmp/fib.js:3"), "LazyCompile:*fib /tmp/fib.js:3");
}

TEST(ShortNameEdges, OperatorTemplatesAndAbiTags) {
  // As __cxa_demangle prints them: a space between "operator<" and its template list.
  EXPECT_EQ(shortFunctionName("std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
                              "<std::char_traits<char> >(std::basic_ostream<char, "
                              "std::char_traits<char> >&, char const*)"),
            "std::operator<< <std::char_traits<char> >");
  EXPECT_EQ(shortFunctionName("app::name[abi:cxx11]() const"), "app::name");
  EXPECT_EQ(shortFunctionName("decltype ({parm#1}+{parm#2}) app::add<int, int>(int, int)"),
            "app::add<int, int>");
}

}  // namespace
}  // namespace incise::analyzer
