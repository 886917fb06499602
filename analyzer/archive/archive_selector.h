// Selectors pick traces out of an archive index.
//
//   latest                       the trace that started last
//   3f9c0a1b                     by id (a unique prefix is enough), also id=3f9c0a1b
//   release=1.4,env=prod         by tags (every term must match)
//   host=db1  cmd=server  kernel=6.1.0  build-id=1a2b   (combine with commas)
//   before=2024-05-01  after=2024-05-01T12:30  before=7d   by start time (UTC; or an age:
//                                              7d, 12h, 30m before now)
// Keys host, cmd, kernel, id, build-id, before and after are fields; any
// other key is a tag. Last week's run of the same program against today's:
//   --base cmd=server,before=7d   --new cmd=server,latest
// cmd= matches the command's program name (argv[0] without its directory)
// or the whole command line; build-id= matches a prefix of any object's
// build-id. When several traces match, the one that started last is chosen
// and the resolution says so.
//
//   auto selector = parseSelector("host=db1,release=1.4");
//   auto chosen = resolveSelector(entries, *selector);
//   if (chosen) use(chosen->entry->file), std::cerr << chosen->note;
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analyzer/archive/archive_index.h"
#include "base/status.h"

namespace incise::analyzer {

struct Selector {
  std::string text;  // as the user typed it
  bool latest = false;
  std::vector<std::pair<std::string, std::string>> terms;  // key=value, all must match
};

Result<Selector> parseSelector(const std::string& text);
bool matchesSelector(const Selector& selector, const ArchiveEntry& entry);
// Every matching entry, oldest start first.
std::vector<const ArchiveEntry*> selectEntries(const std::vector<ArchiveEntry>& entries,
                                               const Selector& selector);

struct Resolution {
  const ArchiveEntry* entry = nullptr;
  size_t matched = 0;
  std::string note;  // non-empty when several matched: which one was taken and why
};

// An Error when nothing matches.
Result<Resolution> resolveSelector(const std::vector<ArchiveEntry>& entries,
                                   const Selector& selector);

}  // namespace incise::analyzer
