// The archive index: one JSON file, DIR/index.json, listing every trace in
// the archive directory with what a user searches by — host, kernel,
// command, build-ids of the objects its samples touched, start time,
// duration, and free-form tags.
//
//   {"format": "incise-archive", "version": 1, "traces": [
//     {"id": "3f9c0a1b2c3d4e5f", "file": "3f9c0a1b2c3d4e5f.trace", "host": "db1", ...,
//      "tags": {"release": "1.4"}}]}
//
// The index is only ever replaced whole and atomically (written to a
// temporary file in DIR, fsynced, renamed over index.json, directory
// fsynced), so a reader sees the old index or the new one, never a mix.
//
//   Result<std::vector<ArchiveEntry>> entries = loadArchiveIndex("/srv/traces");
//   entries->push_back(entry);
//   Status saved = saveArchiveIndex("/srv/traces", *entries);
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace incise::analyzer {

inline constexpr const char* kArchiveIndexName = "index.json";

struct ArchiveEntry {
  std::string id;    // hex XXH3-64 of the file's bytes
  std::string file;  // name inside the archive directory
  std::string host;
  std::string kernel;
  std::vector<std::string> command;
  std::map<std::string, std::string> build_ids;  // object path -> hex build-id
  uint64_t start_wall_ns = 0;
  uint64_t duration_ns = 0;
  uint64_t samples = 0;
  uint64_t added_wall_ns = 0;
  std::map<std::string, std::string> tags;
};

nlohmann::json entryJson(const ArchiveEntry& entry);
Result<ArchiveEntry> entryFromJson(const nlohmann::json& json);

// An empty list when DIR has no index yet; an Error naming the file when it
// cannot be read or parsed.
Result<std::vector<ArchiveEntry>> loadArchiveIndex(const std::string& dir);

// Called between the steps of a save, for tests that simulate a crash.
using SaveHook = std::function<void(const char* step)>;
Status saveArchiveIndex(const std::string& dir, const std::vector<ArchiveEntry>& entries,
                        const SaveHook& hook = {});

// Writes `bytes` to DIR/NAME atomically: a temporary file in DIR, fsync,
// rename, fsync of DIR. `hook("written")` runs after the fsync, before the rename.
Status replaceFileAtomically(const std::string& dir, const std::string& name,
                             const std::string& bytes, const SaveHook& hook = {});
Status syncDirectory(const std::string& dir);

}  // namespace incise::analyzer
