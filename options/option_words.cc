#include "options/option_words.h"

#include <string_view>

namespace incise::options {

Status checkOptionWords(std::span<const std::string> args) {
  for (std::string_view word : args) {
    if (word == "--") break;
    if (word.size() < 2 || word[0] != '-') continue;
    if (word.find('%') == std::string_view::npos) continue;
    return Error("'" + std::string(word) +
                 "' is not an option: no option name holds '%'; give a value with '%' as its "
                 "own argument (-o 'cpu%.trace')");
  }
  return {};
}

}  // namespace incise::options
