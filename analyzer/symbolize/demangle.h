// Turns linker symbol names into what a programmer wrote, and demangled
// names into the short form reports show.
//
// C++ (Itanium "_Z...") goes through abi::__cxa_demangle. Rust legacy names
// ("_ZN...17h<16 hex>E") are demangled the same way, then lose the hash
// suffix and their $LT$/$GT$/.. escapes. Rust v0 ("_R...") and anything else
// that does not demangle is returned unchanged, which is still readable.
//
//   demangle("_ZNSt6vectorIiSaIiEE9push_backERKi")
//       -> "std::vector<int, std::allocator<int> >::push_back(int const&)"
//   demangle("_ZN4core3fmt5write17h0123456789abcdefE") -> "core::fmt::write"
//
// Reports show short names by default (as `perf report` does): no parameter
// list, no return type, no cv/ref qualifiers or ABI tags, and a template
// argument list longer than kMaxTemplateArgsShown characters elided to <...>;
// namespaces, classes, operators, lambdas and "[clone .cold]" stay.
// `--signatures` (NameStyle::kSignature) keeps the full demangled text.
//
//   shortFunctionName("std::vector<int, std::allocator<int> >::push_back(int const&)")
//       -> "std::vector<int, std::allocator<int> >::push_back"
//   shortFunctionName("main::{lambda(int)#1}::operator()(int) const")
//       -> "main::{lambda(int)#1}::operator()"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace incise::analyzer {

enum class NameStyle : uint8_t {
  kShort,      // reports' default: shortFunctionName()
  kSignature,  // --signatures: the demangled text as it is
};

inline constexpr size_t kMaxTemplateArgsShown = 48;

std::string demangle(std::string_view mangled);

// A demangled C++ or Rust name without what makes report rows unreadable
// (see above). Anything it does not understand comes back unchanged.
std::string shortFunctionName(std::string_view demangled);

// The name a report prints for a demangled function in `style`.
inline std::string displayedFunctionName(std::string_view demangled, NameStyle style) {
  return style == NameStyle::kSignature ? std::string(demangled) : shortFunctionName(demangled);
}

}  // namespace incise::analyzer
