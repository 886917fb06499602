// Where a process keeps its --context variables: see context_locations.h.
#include "recorder/context/context_locations.h"

#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>

#include "base/file_identity.h"
#include "objfile/tls_variable.h"
#include "recorder/context/tls_locator.h"

namespace incise::recorder {
namespace {

std::string fileName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::optional<std::string> executableOf(const std::string& dir) {
  char target[4096];
  const ssize_t got = readlink((dir + "/exe").c_str(), target, sizeof target - 1);
  if (got <= 0) return std::nullopt;
  return std::string(target, static_cast<size_t>(got));
}

// The path of the mapped object `spec` names, as the process maps it.
std::optional<std::string> mappedObject(const std::string& dir, const ContextSpec& spec) {
  std::ifstream maps(dir + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    if (namesMappedObject(spec, path)) return path;
  }
  return std::nullopt;
}

std::string quoted(const ContextSpec& spec) {
  return "--context " + spec.name + ": '" + spec.symbol + "'";
}

// Module 1's block is where the ELF puts it, whether or not the loader
// has said so yet.
Result<int64_t> executableBlockOffset(const std::string& path, const ContextSpec& spec) {
  INCISE_ASSIGN_OR_RETURN(objfile::TlsVariable variable,
                          objfile::findTlsVariable(path, spec.symbol));
  return static_cast<int64_t>(variable.offset) -
         static_cast<int64_t>(variable.executableBlockOffset());
}

uint64_t inodeOf(const std::string& path) {
  std::optional<FileIdentity> identity = fileIdentity(path);
  return identity ? static_cast<uint64_t>(identity->inode) : 0;
}

}  // namespace

bool namesMappedObject(const ContextSpec& spec, const std::string& path) {
  return !spec.binary.empty() && (path == spec.binary || fileName(path) == fileName(spec.binary));
}

bool ContextLocations::any() const {
  for (uint8_t size : where.size) {
    if (size != 0) return true;
  }
  return false;
}

Result<uint8_t> contextVariableSize(const std::string& path, const ContextSpec& spec) {
  Result<objfile::TlsVariable> variable = objfile::findTlsVariable(path, spec.symbol);
  if (!variable) return variable.error().context("--context " + spec.name);
  const uint64_t size = variable->size;
  if (size != 1 && size != 2 && size != 4 && size != 8)
    return Error(quoted(spec) + " in " + path + " is " + std::to_string(size) +
                 " bytes: a context value is an integer of 1, 2, 4 or 8 bytes");
  return static_cast<uint8_t>(size);
}

ContextLocations locateContexts(uint32_t pid, const std::vector<ContextSpec>& specs,
                                const std::string& proc_root) {
  ContextLocations found;
  const std::string dir = proc_root + "/" + std::to_string(pid);
  const std::string who = "pid " + std::to_string(pid);
  const std::optional<std::string> executable = executableOf(dir);
  for (size_t slot = 0; slot < specs.size() && slot < MAX_CONTEXTS; ++slot) {
    const ContextSpec& spec = specs[slot];
    std::optional<std::string> object = spec.binary.empty() ? executable : mappedObject(dir, spec);
    if (!object) {
      found.missing.push_back(quoted(spec) + ": " + who + " does not map " +
                              (spec.binary.empty() ? "an executable" : spec.binary));
      found.retry |= !spec.binary.empty();  // a library may be loaded later
      continue;
    }
    Result<uint8_t> size = contextVariableSize(dir + "/root" + *object, spec);
    if (!size) {
      found.missing.push_back(size.error().message() + " (" + who + ")");
      continue;
    }
    Result<TlsLocation> location = locateTlsVariable(pid, *object, spec.symbol, proc_root);
    const bool is_executable =
        executable && fileIdentity(dir + "/exe") == fileIdentity(dir + "/root" + *object);
    if (!location && is_executable) {
      if (Result<int64_t> from_file = executableBlockOffset(dir + "/root" + *object, spec))
        location = TlsLocation{.offset = *from_file};
    }
    if (!location) {
      found.missing.push_back(quoted(spec) + ": " + location.error().message());
      found.retry = true;
      continue;
    }
    found.where.tls_offset[slot] = location->offset;
    found.where.tls_module[slot] = location->module;
    found.where.reading[slot] = static_cast<uint8_t>(spec.reading);
    if (location->module != 0) found.where.dtv_offset = location->dtv_offset;
    found.where.size[slot] = *size;
  }
  found.where.exe_inode = inodeOf(dir + "/exe");
  return found;
}

ContextLocations locateInExecutable(const std::string& executable,
                                    const std::vector<ContextSpec>& specs) {
  ContextLocations found;
  for (size_t slot = 0; slot < specs.size() && slot < MAX_CONTEXTS; ++slot) {
    if (!specs[slot].binary.empty()) continue;
    Result<uint8_t> size = contextVariableSize(executable, specs[slot]);
    Result<int64_t> offset = executableBlockOffset(executable, specs[slot]);
    if (!size || !offset) continue;
    found.where.tls_offset[slot] = *offset;
    found.where.reading[slot] = static_cast<uint8_t>(specs[slot].reading);
    found.where.size[slot] = *size;
  }
  found.where.exe_inode = inodeOf(executable);
  return found;
}

}  // namespace incise::recorder
