#include "analyzer/symbolize/debug_file_finder.h"

#include <elfutils/debuginfod.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "analyzer/symbolize/lazy_library.h"
#include "base/hex.h"
#include "objfile/elf_reader.h"
#include "objfile/unwind_tables.h"

namespace incise::analyzer {
namespace {

std::string_view dirname(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

// A debuglink is a bare file name; anything with a slash could point elsewhere.
bool isPlainFileName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string_view("/\0", 2)) == std::string_view::npos;
}

std::string withoutTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// realpath() as a string; nullopt when the path does not resolve.
std::optional<std::string> resolved(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> real(realpath(path.c_str(), nullptr), &std::free);
  if (!real) return std::nullopt;
  return std::string(real.get());
}

bool isBelow(std::string_view path, std::string_view root) {
  if (root == "/") return true;
  return path.starts_with(root) && (path.size() == root.size() || path[root.size()] == '/');
}

// libdebuginfod, opened only when a look-up needs it (see lazy_library.h);
// elfutils' libdw does the same.
struct Debuginfod {
  decltype(&debuginfod_begin) begin = nullptr;
  decltype(&debuginfod_find_debuginfo) find_debuginfo = nullptr;
  decltype(&debuginfod_end) end = nullptr;

  // Null when the library or one of its functions is missing.
  static const Debuginfod* get() {
    static const Debuginfod* const loaded = [] {
      static LazyLibrary library("libdebuginfod.so.1");
      static Debuginfod api;
      api.begin = library.function<decltype(&debuginfod_begin)>("debuginfod_begin");
      api.find_debuginfo =
          library.function<decltype(&debuginfod_find_debuginfo)>("debuginfod_find_debuginfo");
      api.end = library.function<decltype(&debuginfod_end)>("debuginfod_end");
      return api.begin && api.find_debuginfo && api.end ? &api : nullptr;
    }();
    return loaded;
  }
};

}  // namespace

bool debuginfodConfigured() {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  return urls != nullptr && *urls != '\0';
}

void DebugFileFinder::DebuginfodEnd::operator()(debuginfod_client* client) const {
  // A client exists only if the library loaded.
  Debuginfod::get()->end(client);
}

DebugFileFinder::DebugFileFinder(SymbolizerOptions options) : options_(std::move(options)) {
  if (!options_.symfs.empty()) options_.symfs = withoutTrailingSlashes(options_.symfs);
  for (const std::string& dir : options_.debug_dirs) {
    if (!dir.empty()) build_id_dirs_.push_back({withoutTrailingSlashes(dir), ""});
  }
  // The system debug dir is the machine's own and the trace only names a
  // build-id in it, so its files are opened as they are ("/" as the root):
  // distributions link .build-id entries across /usr.
  if (!options_.system_debug_dir.empty()) {
    build_id_dirs_.push_back({"/", withoutTrailingSlashes(options_.system_debug_dir)});
  }
  if (!options_.symfs.empty()) build_id_dirs_.push_back({options_.symfs, "/usr/lib/debug"});
}

DebugFileFinder::~DebugFileFinder() = default;

std::optional<std::string> DebugFileFinder::pathUnderRoot(std::string_view root,
                                                          std::string_view trace_path) {
  if (root.empty() || trace_path.empty() || trace_path.front() != '/' ||
      trace_path.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }
  while (root.size() > 1 && root.back() == '/') root.remove_suffix(1);
  std::string joined(root == "/" ? std::string_view() : root);
  size_t components = 0;
  while (!trace_path.empty()) {
    const size_t slash = trace_path.find('/');
    const std::string_view component = trace_path.substr(0, slash);
    trace_path =
        slash == std::string_view::npos ? std::string_view() : trace_path.substr(slash + 1);
    if (component.empty() || component == ".") continue;
    if (component == "..") return std::nullopt;
    joined += '/';
    joined += component;
    ++components;
  }
  if (components == 0) return std::nullopt;
  return joined;
}

DebugFileFinder::BeneathFile DebugFileFinder::openBeneath(const std::string& root,
                                                          const std::string& relative,
                                                          Beneath method) {
  BeneathFile file;
  if (root.empty() || relative.empty()) return file;
  if (root == "/") {
    file.fd.reset(open(relative.c_str(), O_RDONLY | O_CLOEXEC));
    return file;
  }
  if (method == Beneath::kOpenat2) {
    const UniqueFd root_fd(open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root_fd) return file;
    const size_t first = relative.find_first_not_of('/');
    const std::string inside = first == std::string::npos ? "." : relative.substr(first);
    open_how how{};
    how.flags = O_RDONLY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    const long fd = syscall(SYS_openat2, root_fd.get(), inside.c_str(), &how, sizeof how);
    const int error = errno;
    if (fd >= 0) {
      file.fd.reset(static_cast<int>(fd));
      return file;
    }
    // EXDEV: a symlink (absolute, or "..") leads out; ELOOP: a /proc magic link.
    file.escaped = error == EXDEV || error == ELOOP;
    // Kernels before 5.6 lack openat2; seccomp filters may refuse it.
    if (error != ENOSYS && error != EPERM) return file;
  }
  // realpath resolves every symlink; the result must still be below the
  // root's own real path. (A rename between the check and the open could
  // slip by; openat2 has no such window.)
  const std::optional<std::string> real_root = resolved(root);
  const std::optional<std::string> real = resolved(root + relative);
  if (!real_root || !real) return file;
  if (!isBelow(*real, *real_root)) {
    file.escaped = true;
    return file;
  }
  file.fd.reset(open(real->c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  return file;
}

std::optional<FoundSymbols> DebugFileFinder::readMatching(const Candidate& candidate,
                                                          const std::string& build_id,
                                                          SymbolizeCounters& counters) {
  BeneathFile file = openBeneath(candidate.root, candidate.relative);
  if (file.escaped) ++counters.refused_paths;
  if (!file.fd) return std::nullopt;
  std::optional<FoundSymbols> found =
      readMatchingFd(std::move(file.fd), candidate.path(), build_id, counters);
  if (found) {
    found->file_root = candidate.root;
    found->file_relative = candidate.relative;
  }
  return found;
}

std::optional<FoundSymbols> DebugFileFinder::readMatchingFd(UniqueFd fd, const std::string& path,
                                                            const std::string& build_id,
                                                            SymbolizeCounters& counters) {
  // The descriptor, not the name, is read: the name could be swapped for a
  // symlink after the check. /proc/self/fd/N reopens exactly that file.
  Result<objfile::ElfObject> read = objfile::readElf("/proc/self/fd/" + std::to_string(fd.get()));
  fd.reset();
  if (!read) return std::nullopt;
  format::ObjectSymbols& object = read->object;
  object.path = path;
  if (!build_id.empty() && !object.build_id.empty() && object.build_id != build_id) {
    ++counters.build_id_mismatches;
    return std::nullopt;
  }
  return FoundSymbols{std::move(object), SymbolSource::kLocal,
                      read->table == objfile::SymbolTableKind::kFull, "/", path};
}

std::optional<DebugFileFinder::Candidate> DebugFileFinder::binaryUnderSymfs(
    const ObjectIdentity& identity, SymbolizeCounters& counters) const {
  if (options_.symfs.empty() || identity.path.empty() || identity.path.front() != '/')
    return std::nullopt;
  std::optional<std::string> normalized = pathUnderRoot("/", identity.path);
  if (!normalized) {
    ++counters.refused_paths;
    return std::nullopt;
  }
  return Candidate{options_.symfs, *normalized};
}

std::vector<objfile::FunctionRange> DebugFileFinder::functionRanges(
    const ObjectIdentity& identity) {
  // find() already counted a refused path for this identity.
  SymbolizeCounters counted_once;
  std::optional<Candidate> binary = binaryUnderSymfs(identity, counted_once);
  if (!binary) return {};
  const BeneathFile file = openBeneath(binary->root, binary->relative);
  if (!file.fd) return {};
  const std::string fd_path = "/proc/self/fd/" + std::to_string(file.fd.get());
  Result<std::string> build_id = objfile::readBuildId(fd_path);
  Result<objfile::UnwindTables> tables = objfile::readUnwindTables(fd_path);
  if (!identity.build_id.empty() && build_id && *build_id != identity.build_id) return {};
  if (!tables) return {};
  return objfile::readFdeRanges(tables->eh_frame.bytes, tables->eh_frame.vaddr);
}

std::optional<FoundSymbols> DebugFileFinder::find(const ObjectIdentity& identity,
                                                  SymbolizeCounters& counters) {
  std::optional<FoundSymbols> local = findLocal(identity, counters);
  if (local && local->full_table) return local;
  if (options_.use_debuginfod && !identity.build_id.empty()) {
    if (auto fetched = findDebuginfod(identity.build_id, counters)) return fetched;
  }
  return local;
}

std::optional<FoundSymbols> DebugFileFinder::findLocal(const ObjectIdentity& identity,
                                                       SymbolizeCounters& counters) {
  if (identity.build_id.size() >= 2) {
    const std::string hex = hexBytes(identity.build_id);
    const std::string relative = "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
    for (const DebugDir& dir : build_id_dirs_) {
      auto found = readMatching({dir.root, dir.under_root + relative}, identity.build_id, counters);
      if (found && found->full_table && !found->object.symbols.empty()) return found;
    }
  }

  const bool is_file_path = !identity.path.empty() && identity.path.front() == '/';
  std::optional<Candidate> binary_file = binaryUnderSymfs(identity, counters);
  std::optional<FoundSymbols> binary;
  if (binary_file) binary = readMatching(*binary_file, identity.build_id, counters);
  if (binary && binary->full_table && !binary->object.symbols.empty()) return binary;

  std::string debug_link = identity.debug_link;
  if (debug_link.empty() && binary) debug_link = binary->object.debug_link;
  if (!debug_link.empty() && !isPlainFileName(debug_link)) {
    ++counters.refused_paths;
    debug_link.clear();
  }
  if (!debug_link.empty() && is_file_path) {
    std::vector<Candidate> candidates;
    if (binary_file) {
      const std::string directory(dirname(binary_file->relative));
      candidates.push_back({binary_file->root, directory + "/" + debug_link});
      candidates.push_back({binary_file->root, directory + "/.debug/" + debug_link});
    }
    const std::string linked = std::string(dirname(identity.path)) + "/" + debug_link;
    if (std::optional<std::string> normalized = pathUnderRoot("/", linked)) {
      for (const DebugDir& dir : build_id_dirs_) {
        candidates.push_back({dir.root, dir.under_root + *normalized});
      }
    }
    for (const Candidate& candidate : candidates) {
      if (binary_file && candidate.path() == binary_file->path()) continue;
      auto found = readMatching(candidate, identity.build_id, counters);
      if (found && found->full_table && !found->object.symbols.empty()) return found;
    }
  }
  if (binary && !binary->object.symbols.empty()) return binary;
  return std::nullopt;
}

std::optional<FoundSymbols> DebugFileFinder::findDebuginfod(const std::string& build_id,
                                                            SymbolizeCounters& counters) {
  if (debuginfod_failed_) return std::nullopt;
  const Debuginfod* api = Debuginfod::get();
  if (!api) {
    debuginfod_failed_ = true;
    return std::nullopt;
  }
  if (!debuginfod_) {
    debuginfod_.reset(api->begin());
    if (!debuginfod_) {
      debuginfod_failed_ = true;
      return std::nullopt;
    }
  }
  char* raw_path = nullptr;
  UniqueFd fd(api->find_debuginfo(debuginfod_.get(),
                                  reinterpret_cast<const unsigned char*>(build_id.data()),
                                  static_cast<int>(build_id.size()), &raw_path));
  std::unique_ptr<char, decltype(&std::free)> path(raw_path, &std::free);
  if (!fd || !path) return std::nullopt;
  // The file comes from libdebuginfod's cache, not from a trace path.
  std::optional<FoundSymbols> found = readMatchingFd(std::move(fd), path.get(), build_id, counters);
  if (!found || found->object.symbols.empty()) return std::nullopt;
  ++counters.debuginfod_fetches;
  found->source = SymbolSource::kDebuginfod;
  return found;
}

}  // namespace incise::analyzer
