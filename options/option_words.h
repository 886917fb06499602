// Option words Boost.Program_options cannot report on: checked before it
// parses a command line.
//
// Boost builds an error message by replacing each %placeholder% in it
// (%canonical_option%, %original_token%, ...) until none is left. When the
// word the user typed itself holds a placeholder, every replacement brings
// it back and the message never ends: `incise top t.trace
// --%canonical_option%` would hang instead of failing. No option name holds
// '%', so a word that starts like an option and holds one is refused here
// with a message of our own:
//
//   if (Status words = options::checkOptionWords(args); !words) return usage(words);
//   // "'--x%y' is not an option: no option name holds '%'; give a value
//   //  with '%' as its own argument (-o 'cpu%.trace')"
//
// Words after "--" are operands and are not looked at.
#pragma once

#include <span>
#include <string>

#include "base/status.h"

namespace incise::options {

Status checkOptionWords(std::span<const std::string> args);

}  // namespace incise::options
