// Where a report writes: stdout, or the -o file. Write errors (a full disk)
// are reported, not ignored.
//
//   return writeReport(cli, [&](std::ostream& out) { table.render(out); });
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace incise::analyzer {

class CommandLine;

// Runs `write` on stdout or on the -o file; returns the exit code (0, or 1
// with a message naming the file).
int writeReport(const CommandLine& cli, const std::function<void(std::ostream&)>& write);

}  // namespace incise::analyzer
