// DebugFileFinder: finds an object's symbols outside the trace — a debug file
// by build-id, the binary under --symfs, its .gnu_debuglink file, or
// debuginfod — and never opens a path outside --symfs and the debug
// directories.
//
// Order: DIR/.build-id/xx/rest.debug for each debug dir (and SYMFS/usr/lib/
// debug); then the binary at SYMFS/path, and the file its debuglink names
// next to it, in its .debug/ folder or in each debug dir below the binary's
// directory; then debuginfod by build-id; then the binary itself (.dynsym
// only, when stripped). The first with a full .symtab wins. A local file
// whose build-id differs from the trace's is skipped.
//
// Every local file is opened beneath its root (--symfs, or the debug dir it
// came from; "/" for the system debug dir, which the trace cannot name into):
// a symlink planted in a sysroot that points out of it is not followed, it
// is refused and counted (openBeneath).
//
//   DebugFileFinder finder(options);
//   std::optional<FoundSymbols> found = finder.find({path, build_id, debug_link}, counters);
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/symbolize/frame.h"
#include "analyzer/symbolize/symbolize_counters.h"
#include "analyzer/symbolize/symbolizer_options.h"
#include "base/unique_fd.h"
#include "format/metadata.h"
#include "objfile/fde_ranges.h"

struct debuginfod_client;

namespace incise::analyzer {

struct ObjectIdentity {
  std::string path;      // as in the trace: never opened as is
  std::string build_id;  // raw bytes; may be empty
  std::string debug_link;
};

struct FoundSymbols {
  format::ObjectSymbols object;  // `path` names the file they came from
  SymbolSource source = SymbolSource::kLocal;
  bool full_table = false;  // from a .symtab (every function), not only .dynsym
  // The file they came from, to open again (openBeneath) for its line table.
  std::string file_root;
  std::string file_relative;
};

class DebugFileFinder {
 public:
  explicit DebugFileFinder(SymbolizerOptions options);
  ~DebugFileFinder();
  DebugFileFinder(const DebugFileFinder&) = delete;
  DebugFileFinder& operator=(const DebugFileFinder&) = delete;

  // The first file with a .symtab in the order above; a stripped binary's
  // .dynsym only when no such file is found.
  std::optional<FoundSymbols> find(const ObjectIdentity& identity, SymbolizeCounters& counters);

  // The object's .eh_frame function ranges, read from the binary under
  // --symfs when it is there with the trace's build-id; empty otherwise.
  std::vector<objfile::FunctionRange> functionRanges(const ObjectIdentity& identity);

  // ROOT/PATH with PATH normalized, or nullopt when PATH is not absolute,
  // contains "..", a NUL, or names the root itself, or ROOT is empty.
  static std::optional<std::string> pathUnderRoot(std::string_view root,
                                                  std::string_view trace_path);

  // How openBeneath keeps to its root: openat2(RESOLVE_BENEATH |
  // RESOLVE_NO_MAGICLINKS) (Linux 5.6+), falling back to realpath and a
  // prefix check when the kernel lacks it; kRealpath forces the fallback.
  enum class Beneath { kOpenat2, kRealpath };
  struct BeneathFile {
    UniqueFd fd;           // read-only, close-on-exec
    bool escaped = false;  // ROOT/RELATIVE resolves outside ROOT (a symlink out, a magic link)
  };
  // Opens ROOT/RELATIVE (RELATIVE as pathUnderRoot normalizes it, "/a/b")
  // without resolving outside ROOT. fd -1 when absent, unreadable or escaping.
  static BeneathFile openBeneath(const std::string& root, const std::string& relative,
                                 Beneath method = Beneath::kOpenat2);

 private:
  struct DebuginfodEnd {
    void operator()(debuginfod_client* client) const;
  };

  // A file to try: `root` + `relative`, opened beneath `root`.
  struct Candidate {
    std::string root;
    std::string relative;  // "/a/b", normalized
    std::string path() const { return root == "/" ? relative : root + relative; }
  };
  // A debug directory: `root` + `under_root` (under_root "" or "/a/b").
  struct DebugDir {
    std::string root;
    std::string under_root;
  };

  std::optional<FoundSymbols> findLocal(const ObjectIdentity& identity,
                                        SymbolizeCounters& counters);
  std::optional<FoundSymbols> findDebuginfod(const std::string& build_id,
                                             SymbolizeCounters& counters);
  // Reads the candidate; nullopt when absent, unreadable, escaping its root
  // (counted as refused) or when its build-id contradicts `build_id`.
  std::optional<FoundSymbols> readMatching(const Candidate& candidate, const std::string& build_id,
                                           SymbolizeCounters& counters);
  // Reads `fd` (taking it), naming the result `path`.
  std::optional<FoundSymbols> readMatchingFd(UniqueFd fd, const std::string& path,
                                             const std::string& build_id,
                                             SymbolizeCounters& counters);
  // The binary under --symfs for a trace path; nullopt without --symfs.
  std::optional<Candidate> binaryUnderSymfs(const ObjectIdentity& identity,
                                            SymbolizeCounters& counters) const;

  SymbolizerOptions options_;
  std::vector<DebugDir> build_id_dirs_;
  std::unique_ptr<debuginfod_client, DebuginfodEnd> debuginfod_;
  bool debuginfod_failed_ = false;
};

}  // namespace incise::analyzer
