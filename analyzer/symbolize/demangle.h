// Turns linker symbol names into what a programmer wrote.
//
// C++ (Itanium "_Z...") goes through abi::__cxa_demangle. Rust legacy names
// ("_ZN...17h<16 hex>E") are demangled the same way, then lose the hash
// suffix and their $LT$/$GT$/.. escapes. Rust v0 ("_R...") and anything else
// that does not demangle is returned unchanged, which is still readable.
//
//   demangle("_ZNSt6vectorIiSaIiEE9push_backERKi")
//       -> "std::vector<int, std::allocator<int> >::push_back(int const&)"
//   demangle("_ZN4core3fmt5write17h0123456789abcdefE") -> "core::fmt::write"
#pragma once

#include <string>
#include <string_view>

namespace incise::analyzer {

std::string demangle(std::string_view mangled);

}  // namespace incise::analyzer
