#include "objfile/elf_file.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace incise::objfile {

bool libelfReady() {
  static const bool ready = elf_version(EV_CURRENT) != EV_NONE;
  return ready;
}

Error libelfError(const std::string& path, const std::string& what) {
  const char* detail = elf_errmsg(-1);
  return Error(path + ": " + what + (detail ? std::string(": ") + detail : std::string()));
}

Result<ElfFile> ElfFile::open(const std::string& path) {
  if (!libelfReady()) return Error("libelf: version mismatch");
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error("cannot open " + path + ": " + std::strerror(errno));
  ElfFile file;
  file.elf_.reset(elf_begin(fd.get(), ELF_C_READ, nullptr));
  if (!file.elf_) return libelfError(path, "not an ELF file");
  file.fd_ = std::move(fd);
  return file;
}

Result<ElfFile> ElfFile::fromImage(std::string_view image, const std::string& path) {
  if (!libelfReady()) return Error("libelf: version mismatch");
  ElfFile file;
  file.image_ = std::make_unique<std::string>(image);
  file.elf_.reset(elf_memory(file.image_->data(), file.image_->size()));
  if (!file.elf_) return libelfError(path, "not an ELF file");
  return file;
}

}  // namespace incise::objfile
