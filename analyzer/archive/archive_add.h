// Adding a trace to an archive directory, crash-safely.
//
// Steps: check the trace opens (its header and metadata fill the entry);
// copy it to a temporary file in DIR while hashing it (the hash is its id),
// fsync, rename to DIR/ID.trace, fsync DIR; then replace the index
// atomically (archive_index.h). A crash at any point leaves index.json as it
// was or as it will be; at worst a temporary file, or a trace file no index
// entry names yet, stays behind (ls ignores both; adding the trace again
// reuses the file). Adds to one directory are serialised with flock on
// DIR/.lock, so two concurrent adds do not lose an entry. Traces hold
// command lines, paths and symbols: a new archive directory is 0700, and
// every file in it 0600, whatever the umask.
//
//   auto added = addToArchive("/srv/traces", "app.trace", {{"release", "1.4"}});
//   if (added) std::cout << added->entry.id << (added->already_present ? " (already there)" : "");
#pragma once

#include <map>
#include <optional>
#include <string>

#include "analyzer/archive/archive_index.h"
#include "base/status.h"

namespace incise::analyzer {

struct AddResult {
  ArchiveEntry entry;
  bool already_present = false;  // the same bytes were archived before (tags merged)
  // Set when the trace was damaged or cut short: what the archived copy holds.
  std::optional<std::string> salvage_notice;
};

// `hook` is called with the step just done ("copied", "trace renamed", then
// the index's "written", "renamed"): tests use it to simulate crashes.
Result<AddResult> addToArchive(const std::string& dir, const std::string& trace_path,
                               const std::map<std::string, std::string>& tags,
                               const SaveHook& hook = {});

// "k=v" -> {k, v}; an error for a missing '=' or an empty key.
Result<std::pair<std::string, std::string>> parseTag(const std::string& text);

}  // namespace incise::analyzer
