#include "analyzer/symbolize/debug_file_finder.h"

#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "objfile/elf_reader.h"

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

}  // namespace

bool debuginfodConfigured() {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  return urls != nullptr && *urls != '\0';
}

void DebugFileFinder::DebuginfodEnd::operator()(debuginfod_client* client) const {
  debuginfod_end(client);
}

DebugFileFinder::DebugFileFinder(SymbolizerOptions options) : options_(std::move(options)) {
  build_id_dirs_ = options_.debug_dirs;
  if (!options_.system_debug_dir.empty()) build_id_dirs_.push_back(options_.system_debug_dir);
  if (!options_.symfs.empty()) build_id_dirs_.push_back(options_.symfs + "/usr/lib/debug");
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

std::optional<format::ObjectSymbols> DebugFileFinder::readMatching(const std::string& file,
                                                                   const std::string& build_id,
                                                                   SymbolizeCounters& counters) {
  if (access(file.c_str(), R_OK) != 0) return std::nullopt;
  Result<format::ObjectSymbols> object = objfile::readElfObject(file);
  if (!object) return std::nullopt;
  if (!build_id.empty() && !object->build_id.empty() && object->build_id != build_id) {
    ++counters.build_id_mismatches;
    return std::nullopt;
  }
  return object.take();
}

std::optional<FoundSymbols> DebugFileFinder::find(const ObjectIdentity& identity,
                                                  SymbolizeCounters& counters) {
  if (auto found = findLocal(identity, counters)) return found;
  if (options_.use_debuginfod && !identity.build_id.empty()) {
    return findDebuginfod(identity.build_id, counters);
  }
  return std::nullopt;
}

std::optional<FoundSymbols> DebugFileFinder::findLocal(const ObjectIdentity& identity,
                                                       SymbolizeCounters& counters) {
  auto found = [](format::ObjectSymbols object) {
    return std::optional<FoundSymbols>(FoundSymbols{std::move(object), SymbolSource::kLocal});
  };
  if (identity.build_id.size() >= 2) {
    const std::string hex = objfile::buildIdHex(identity.build_id);
    const std::string relative = "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
    for (const std::string& dir : build_id_dirs_) {
      auto object = readMatching(dir + relative, identity.build_id, counters);
      if (object && !object->symbols.empty()) return found(std::move(*object));
    }
  }

  const bool is_file_path = !identity.path.empty() && identity.path.front() == '/';
  std::optional<std::string> binary_path;
  if (!options_.symfs.empty() && is_file_path) {
    binary_path = pathUnderRoot(options_.symfs, identity.path);
    if (!binary_path) ++counters.refused_paths;
  }
  std::optional<format::ObjectSymbols> binary;
  if (binary_path) binary = readMatching(*binary_path, identity.build_id, counters);

  std::string debug_link = identity.debug_link;
  if (debug_link.empty() && binary) debug_link = binary->debug_link;
  if (!debug_link.empty() && !isPlainFileName(debug_link)) {
    ++counters.refused_paths;
    debug_link.clear();
  }
  if (!debug_link.empty() && is_file_path) {
    std::vector<std::string> candidates;
    if (binary_path) {
      const std::string directory(dirname(*binary_path));
      candidates.push_back(directory + "/" + debug_link);
      candidates.push_back(directory + "/.debug/" + debug_link);
    }
    const std::string linked = std::string(dirname(identity.path)) + "/" + debug_link;
    for (const std::string& dir : build_id_dirs_) {
      if (auto candidate = pathUnderRoot(dir, linked)) candidates.push_back(*candidate);
    }
    for (const std::string& candidate : candidates) {
      if (binary_path && candidate == *binary_path) continue;
      auto object = readMatching(candidate, identity.build_id, counters);
      if (object && !object->symbols.empty()) return found(std::move(*object));
    }
  }
  if (binary && !binary->symbols.empty()) return found(std::move(*binary));
  return std::nullopt;
}

std::optional<FoundSymbols> DebugFileFinder::findDebuginfod(const std::string& build_id,
                                                            SymbolizeCounters& counters) {
  if (debuginfod_failed_) return std::nullopt;
  if (!debuginfod_) {
    debuginfod_.reset(debuginfod_begin());
    if (!debuginfod_) {
      debuginfod_failed_ = true;
      return std::nullopt;
    }
  }
  char* raw_path = nullptr;
  const int fd = debuginfod_find_debuginfo(debuginfod_.get(),
                                           reinterpret_cast<const unsigned char*>(build_id.data()),
                                           static_cast<int>(build_id.size()), &raw_path);
  std::unique_ptr<char, decltype(&std::free)> path(raw_path, &std::free);
  if (fd < 0) return std::nullopt;
  close(fd);
  if (!path) return std::nullopt;
  // The cache path comes from libdebuginfod, not from the trace.
  auto object = readMatching(path.get(), build_id, counters);
  if (!object || object->symbols.empty()) return std::nullopt;
  ++counters.debuginfod_fetches;
  return FoundSymbols{std::move(*object), SymbolSource::kDebuginfod};
}

}  // namespace incise::analyzer
