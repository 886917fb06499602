// DebugFileFinder: finds an object's symbols outside the trace — a debug file
// by build-id, the binary under --symfs, its .gnu_debuglink file, or
// debuginfod — and never opens a path outside --symfs and the debug
// directories.
//
// Order: DIR/.build-id/xx/rest.debug for each debug dir (and SYMFS/usr/lib/
// debug); then the binary at SYMFS/path, and the file its debuglink names
// next to it, in its .debug/ folder or in each debug dir below the binary's
// directory; then the binary itself (.dynsym only, when stripped); then
// debuginfod by build-id. A local file whose build-id differs from the
// trace's is skipped.
//
//   DebugFileFinder finder(options);
//   std::optional<FoundSymbols> found = finder.find({path, build_id, debug_link}, counters);
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/symbolize/frame.h"
#include "analyzer/symbolize/symbolize_counters.h"
#include "analyzer/symbolize/symbolizer_options.h"
#include "format/metadata.h"

struct debuginfod_client;

namespace incise::analyzer {

struct ObjectIdentity {
  std::string path;      // as in the trace: never opened as is
  std::string build_id;  // raw bytes; may be empty
  std::string debug_link;
};

struct FoundSymbols {
  format::ObjectSymbols object;
  SymbolSource source = SymbolSource::kLocal;
};

class DebugFileFinder {
 public:
  explicit DebugFileFinder(SymbolizerOptions options);
  ~DebugFileFinder();
  DebugFileFinder(const DebugFileFinder&) = delete;
  DebugFileFinder& operator=(const DebugFileFinder&) = delete;

  std::optional<FoundSymbols> find(const ObjectIdentity& identity, SymbolizeCounters& counters);

  // ROOT/PATH with PATH normalized, or nullopt when PATH is not absolute,
  // contains "..", a NUL, or names the root itself, or ROOT is empty.
  static std::optional<std::string> pathUnderRoot(std::string_view root,
                                                  std::string_view trace_path);

 private:
  struct DebuginfodEnd {
    void operator()(debuginfod_client* client) const;
  };

  std::optional<FoundSymbols> findLocal(const ObjectIdentity& identity,
                                        SymbolizeCounters& counters);
  std::optional<FoundSymbols> findDebuginfod(const std::string& build_id,
                                             SymbolizeCounters& counters);
  // Reads `file`; nullopt when unreadable or when its build-id contradicts `build_id`.
  std::optional<format::ObjectSymbols> readMatching(const std::string& file,
                                                    const std::string& build_id,
                                                    SymbolizeCounters& counters);

  SymbolizerOptions options_;
  std::vector<std::string> build_id_dirs_;
  std::unique_ptr<debuginfod_client, DebuginfodEnd> debuginfod_;
  bool debuginfod_failed_ = false;
};

}  // namespace incise::analyzer
