#include "analyzer/symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace incise::analyzer {
namespace {

bool isHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// Legacy Rust symbols end in "17h" + 16 hex digits + "E".
bool isRustLegacy(std::string_view mangled) {
  constexpr size_t kHashPart = 3 + 16 + 1;
  if (mangled.size() <= kHashPart + 3 || mangled.substr(0, 3) != "_ZN") return false;
  const std::string_view tail = mangled.substr(mangled.size() - kHashPart);
  if (tail.substr(0, 3) != "17h" || tail.back() != 'E') return false;
  for (const char c : tail.substr(3, 16)) {
    if (!isHexDigit(c)) return false;
  }
  return true;
}

// "$LT$" -> "<", "$u20$" -> " ", ".." -> "::" as rustc's legacy mangling escapes them.
std::string unescapeRustLegacy(std::string_view text) {
  static constexpr std::pair<std::string_view, char> kEscapes[] = {
      {"$SP$", '@'}, {"$BP$", '*'}, {"$RF$", '&'}, {"$LT$", '<'},
      {"$GT$", '>'}, {"$LP$", '('}, {"$RP$", ')'}, {"$C$", ','}};
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    // rustc prefixes "_" to a path component that starts with '$'.
    const bool component_start = i == 0 || (i >= 2 && text.substr(i - 2, 2) == "::");
    if (component_start && text.substr(i, 2) == "_$") {
      ++i;
      continue;
    }
    if (text[i] == '$') {
      bool replaced = false;
      for (const auto& [escape, character] : kEscapes) {
        if (text.substr(i, escape.size()) == escape) {
          out.push_back(character);
          i += escape.size();
          replaced = true;
          break;
        }
      }
      // "$u7e$": a character by its hex code.
      if (!replaced && text.substr(i, 2) == "$u") {
        const size_t close = text.find('$', i + 2);
        if (close != std::string_view::npos && close - i - 2 <= 2 && close > i + 2) {
          const std::string code(text.substr(i + 2, close - i - 2));
          out.push_back(static_cast<char>(std::strtoul(code.c_str(), nullptr, 16)));
          i = close + 1;
          replaced = true;
        }
      }
      if (replaced) continue;
    }
    if (text.substr(i, 2) == "..") {
      out += "::";
      i += 2;
      continue;
    }
    out.push_back(text[i++]);
  }
  return out;
}

std::string cxaDemangle(std::string_view mangled) {
  const std::string terminated(mangled);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(terminated.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !demangled) return terminated;
  return demangled.get();
}

}  // namespace

std::string demangle(std::string_view mangled) {
  if (mangled.substr(0, 2) != "_Z") return std::string(mangled);
  std::string demangled = cxaDemangle(mangled);
  if (!isRustLegacy(mangled)) return demangled;
  constexpr std::string_view kHashSuffixStart = "::h";
  const size_t hash = demangled.rfind(kHashSuffixStart);
  if (hash != std::string::npos && demangled.size() - hash == kHashSuffixStart.size() + 16) {
    demangled.resize(hash);
  }
  return unescapeRustLegacy(demangled);
}

}  // namespace incise::analyzer
