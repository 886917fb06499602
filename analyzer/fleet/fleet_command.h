// incise archive init|push|diff|top --clickhouse URL: the fleet archive.
// `incise archive` (archive_command.cc) hands these over when --clickhouse
// is given; `init`, `push` and `top` exist only here.
//
//   if (isFleetArchiveCall(args)) return runFleetArchive(args);   // args[0] = subcommand
#pragma once

#include <string>
#include <vector>

namespace incise::analyzer {

// True for init/push/top, and for diff with --clickhouse.
bool isFleetArchiveCall(const std::vector<std::string>& args);
// The fleet part of `incise archive --help`.
extern const char* const kFleetArchiveUsage;
int runFleetArchive(const std::vector<std::string>& args);

}  // namespace incise::analyzer
