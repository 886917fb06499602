#include "recorder/preload_library.h"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace incise::recorder {
namespace {

// As execvp finds it: a name with a slash is a path, any other is looked up in PATH.
std::optional<std::string> resolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string directories = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= directories.size()) {
    size_t end = directories.find(':', start);
    if (end == std::string::npos) end = directories.size();
    std::string directory = directories.substr(start, end - start);
    std::string candidate = (directory.empty() ? "." : directory) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

// Whether a 64-bit ELF file has a PT_INTERP (a dynamic loader to preload
// through); nullopt for files that are not such ELF (scripts: their
// interpreter is what runs).
std::optional<bool> hasInterpreter(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  Elf64_Ehdr header{};
  if (!file.read(reinterpret_cast<char*>(&header), sizeof(header))) return std::nullopt;
  if (std::string_view(reinterpret_cast<const char*>(header.e_ident), SELFMAG) != ELFMAG ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize != sizeof(Elf64_Phdr) ||
      header.e_phnum == 0 || header.e_phnum > 4096)
    return std::nullopt;
  file.seekg(static_cast<std::streamoff>(header.e_phoff));
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment{};
    if (!file.read(reinterpret_cast<char*>(&segment), sizeof(segment))) return std::nullopt;
    if (segment.p_type == PT_INTERP) return true;
  }
  return false;
}

}  // namespace

Result<std::string> findPreloadLibrary() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return Error("cannot read /proc/self/exe to find " + std::string(kPreloadLibraryName));
  std::filesystem::path directory = self.parent_path();
  std::vector<std::filesystem::path> candidates = {
      directory.parent_path() / "lib" / "incise" /
          kPreloadLibraryName,                                    // installed: bin/ and lib/incise/
      directory.parent_path() / "preload" / kPreloadLibraryName,  // a build tree
  };
  std::string looked;
  for (const std::filesystem::path& candidate : candidates) {
    if (std::filesystem::is_regular_file(candidate, error)) return candidate.string();
    looked += (looked.empty() ? "" : ", ") + candidate.string();
  }
  return Error(std::string(kPreloadLibraryName) +
               " is not installed beside incise-record (looked at " + looked + ")");
}

std::optional<std::string> preloadRefusal(const std::string& program) {
  std::optional<std::string> path = resolveProgram(program);
  if (!path) return std::nullopt;
  struct stat st;
  if (stat(path->c_str(), &st) != 0) return std::nullopt;
  if (st.st_mode & (S_ISUID | S_ISGID))
    return *path + " is set" + ((st.st_mode & S_ISUID) ? "uid" : "gid") +
           ": the dynamic loader ignores LD_PRELOAD for it";
  if (hasInterpreter(*path) == false)
    return *path + " is statically linked: no library can be preloaded into it";
  return std::nullopt;
}

}  // namespace incise::recorder
