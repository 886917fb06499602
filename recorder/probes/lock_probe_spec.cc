#include "recorder/probes/lock_probe_spec.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "objfile/elf_reader.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kOption = "--lock-probe";

}  // namespace

Result<uint64_t> functionFileOffset(const format::ObjectSymbols& object, std::string_view name,
                                    std::string_view what) {
  const format::Symbol* found = nullptr;
  for (const format::Symbol& symbol : object.symbols) {
    if (symbol.name == name && symbol.address != 0) {
      found = &symbol;
      break;
    }
  }
  if (!found)
    return Error(std::string(what) + ": no symbol '" + std::string(name) + "' in " + object.path);
  for (const format::Segment& segment : object.segments) {
    bool executable = (segment.flags & 1u) != 0;  // PF_X
    if (executable && found->address >= segment.vaddr &&
        found->address < segment.vaddr + segment.file_size)
      return found->address - segment.vaddr + segment.file_offset;
  }
  return Error(std::string(what) + ": symbol '" + std::string(name) + "' in " + object.path +
               " is not in an executable segment");
}

Result<ResolvedLockProbe> resolveLockProbe(const LockProbeSpec& spec) {
  struct stat info {};
  if (stat(spec.binary.c_str(), &info) != 0)
    return Error(std::string(kOption) + ": " + spec.binary + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    return Error(std::string(kOption) + ": " + spec.binary + " is not a regular file");
  Result<format::ObjectSymbols> object = objfile::readElfObject(spec.binary);
  if (!object) return object.error().context(std::string(kOption));
  Result<uint64_t> acquire = functionFileOffset(*object, spec.acquire_symbol, kOption);
  if (!acquire) return acquire.error();
  Result<uint64_t> release = functionFileOffset(*object, spec.release_symbol, kOption);
  if (!release) return release.error();
  return ResolvedLockProbe{.spec = spec, .acquire_offset = *acquire, .release_offset = *release};
}

}  // namespace incise::recorder
