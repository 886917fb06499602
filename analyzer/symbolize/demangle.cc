#include "analyzer/symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <optional>

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

// ---- short names ------------------------------------------------------------
// A forward scan over demangled text that knows the few places where brackets
// are not brackets: operator names ("operator<", "operator()", "operator<<"),
// "(anonymous namespace)" and "decltype (...)".

bool isIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool startsWith(std::string_view text, size_t at, std::string_view prefix) {
  return text.substr(at, prefix.size()) == prefix;
}

bool closes(char opener, char closer) {
  return (opener == '<' && closer == '>') || (opener == '(' && closer == ')') ||
         (opener == '[' && closer == ']') || (opener == '{' && closer == '}');
}

// Where the text after "operator" at `at` ends: past its symbol ("<<=",
// "()", "new[]"), or, for a conversion operator ("operator bool",
// "operator std::function<void (int)>"), at its parameter list. A space
// the demangler puts before a template list ("operator< <int>") is skipped.
size_t operatorEnd(std::string_view text, size_t at) {
  static constexpr std::string_view kSymbols[] = {
      "<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "->", "()", "[]", "==",   "!=", "&&",
      "||",  "++",  "--",  "+=",  "-=", "*=", "/=", "%=", "&=", "|=", "^=", "\"\"", "<",  ">",
      "+",   "-",   "*",   "/",   "%",  "&",  "|",  "^",  "~",  "!",  "=",  ","};
  size_t i = at + std::string_view("operator").size();
  for (std::string_view symbol : kSymbols) {
    if (!startsWith(text, i, symbol)) continue;
    i += symbol.size();
    if (symbol == "\"\"") {  // operator"" _suffix
      if (startsWith(text, i, " ")) ++i;
      while (i < text.size() && isIdentifierChar(text[i])) ++i;
    }
    if (startsWith(text, i, " <")) ++i;
    return i;
  }
  if (!startsWith(text, i, " ")) return i;
  ++i;
  for (std::string_view word : {"new", "delete", "co_await"}) {
    if (startsWith(text, i, word) &&
        (i + word.size() == text.size() || !isIdentifierChar(text[i + word.size()]))) {
      i += word.size();
      if (startsWith(text, i, "[]")) i += 2;
      if (startsWith(text, i, " <")) ++i;
      return i;
    }
  }
  // A conversion operator: its type runs to the parameter list.
  int depth = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '(' && depth == 0) break;
    if (c == '<' || c == '(' || c == '[') ++depth;
    if ((c == '>' || c == ')' || c == ']') && depth > 0) --depth;
  }
  return i;
}

// When "operator" starts a name at `at`, the end of that operator name.
std::optional<size_t> operatorAt(std::string_view text, size_t at) {
  // Called at every character of every name: most fail on the first letter.
  if (at >= text.size() || text[at] != 'o') return std::nullopt;
  if (!startsWith(text, at, "operator") || (at > 0 && isIdentifierChar(text[at - 1]))) {
    return std::nullopt;
  }
  const size_t after = at + std::string_view("operator").size();
  if (after < text.size() && isIdentifierChar(text[after])) return std::nullopt;  // operatorX
  return operatorEnd(text, at);
}

constexpr std::string_view kAnonymousNamespace = "(anonymous namespace)";

// Index of the bracket closing the one at `open`, or npos.
size_t matchingClose(std::string_view text, size_t open) {
  std::string openers;
  for (size_t i = open; i < text.size(); ++i) {
    if (auto end = operatorAt(text, i)) {
      i = *end - 1;
      continue;
    }
    const char c = text[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      openers.push_back(c);
    } else if (!openers.empty() && closes(openers.back(), c)) {
      openers.pop_back();
      if (openers.empty()) return i;
    }
  }
  return std::string_view::npos;
}

// The name part of a function signature: [return type ]NAME(params) quals.
// nullopt when `text` is not shaped like that (data, or a function that
// returns a function pointer: "void (*f(int))(long)").
struct SignatureParts {
  size_t name_start = 0;
  size_t params_start = std::string_view::npos;  // npos: no parameter list
};

std::optional<SignatureParts> splitSignature(std::string_view text) {
  SignatureParts parts;
  std::string openers;
  for (size_t i = 0; i < text.size(); ++i) {
    if (auto end = operatorAt(text, i)) {
      i = *end - 1;
      continue;
    }
    const char c = text[i];
    if (openers.empty()) {
      if (c == ' ') parts.name_start = i + 1;
      if (c == '(' && startsWith(text, i, kAnonymousNamespace)) {
        i += kAnonymousNamespace.size() - 1;
        continue;
      }
      const std::string_view before = text.substr(0, i);
      const bool decltype_group =
          c == '(' && (before.ends_with("decltype") || before.ends_with("decltype "));
      if (c == '(' && !decltype_group) {
        if (i + 1 < text.size() && (text[i + 1] == '*' || text[i + 1] == '&')) return std::nullopt;
        const size_t close = matchingClose(text, i);
        if (close == std::string_view::npos) return std::nullopt;
        if (startsWith(text, close + 1, "::")) {  // a function-local entity: "f(int)::{lambda()#1}"
          i = close;
          continue;
        }
        // After the parameters only qualifiers may follow (" const", " &&", " noexcept").
        if (text.find('(', close) != std::string_view::npos) return std::nullopt;
        parts.params_start = i;
        return parts;
      }
    }
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      openers.push_back(c);
    } else if (!openers.empty() && closes(openers.back(), c)) {
      openers.pop_back();
    }
  }
  parts.name_start = 0;  // not a signature: nothing to drop
  return parts;
}

// Drops "[abi:cxx11]" tags and elides long template argument lists (and long
// lambda parameter lists) outside brackets; the rest is copied.
std::string elideLongGroups(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    if (auto end = operatorAt(name, i)) {
      out.append(name.substr(i, *end - i));
      i = *end;
      continue;
    }
    const char c = name[i];
    if (c == '[' && startsWith(name, i, "[abi:")) {
      const size_t close = name.find(']', i);
      if (close != std::string_view::npos) {
        i = close + 1;
        continue;
      }
    }
    if (c == '(' && startsWith(name, i, kAnonymousNamespace)) {
      out.append(kAnonymousNamespace);
      i += kAnonymousNamespace.size();
      continue;
    }
    if (c == '<' || c == '{' || c == '(' || c == '[') {
      const size_t close = matchingClose(name, i);
      if (close == std::string_view::npos) {
        out.append(name.substr(i));  // unbalanced: leave it be
        break;
      }
      const std::string_view group = name.substr(i, close + 1 - i);
      // A template list follows a name ("vector<"); "<T as Trait>" starts a Rust path.
      const bool template_list = c == '<' && i > 0 && name[i - 1] != ':';
      if (template_list && group.size() > kMaxTemplateArgsShown) {
        out.append("<...>");
      } else if (c == '(' && group.size() > kMaxTemplateArgsShown) {
        out.append("(...)");  // the parameters of an enclosing function: "f(...)::{lambda()#1}"
      } else if (c == '{' && startsWith(group, 0, "{lambda(") &&
                 group.size() > kMaxTemplateArgsShown) {
        const size_t params_close = matchingClose(group, std::string_view("{lambda").size());
        out.append("{lambda(...)");
        out.append(params_close == std::string_view::npos ? std::string_view("}")
                                                          : group.substr(params_close + 1));
      } else {
        out.append(group);
      }
      i = close + 1;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

// "non-virtual thunk to X::f(int)" names a function too: shorten what follows.
constexpr std::string_view kSpecialPrefixes[] = {"non-virtual thunk to ",
                                                 "virtual thunk to ",
                                                 "covariant return thunk to ",
                                                 "transaction clone for ",
                                                 "construction vtable for ",
                                                 "vtable for ",
                                                 "VTT for ",
                                                 "typeinfo name for ",
                                                 "typeinfo for ",
                                                 "guard variable for ",
                                                 "TLS init function for ",
                                                 "TLS wrapper function for "};

}  // namespace

std::string shortFunctionName(std::string_view demangled) {
  for (std::string_view prefix : kSpecialPrefixes) {
    if (startsWith(demangled, 0, prefix)) {
      return std::string(prefix) + shortFunctionName(demangled.substr(prefix.size()));
    }
  }
  // GCC's clones ("f(int) [clone .cold]") are separate code: keep the note.
  std::string_view core = demangled;
  std::string_view clone_suffix;
  if (const size_t clone = demangled.find(" [clone "); clone != std::string_view::npos) {
    core = demangled.substr(0, clone);
    clone_suffix = demangled.substr(clone);
  }
  const std::optional<SignatureParts> parts = splitSignature(core);
  if (!parts) return std::string(demangled);
  const size_t name_end =
      parts->params_start == std::string_view::npos ? core.size() : parts->params_start;
  std::string name = elideLongGroups(core.substr(parts->name_start, name_end - parts->name_start));
  if (name.empty()) return std::string(demangled);
  name.append(clone_suffix);
  return name;
}

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
