// An ELF file opened for libelf: the descriptor (or the image's copy) and
// the libelf handle owned together, so every ELF reader opens files one way.
//
//   INCISE_ASSIGN_OR_RETURN(objfile::ElfFile file, objfile::ElfFile::open(path));
//   GElf_Ehdr header;
//   if (gelf_getehdr(file.elf(), &header) == nullptr) return objfile::libelfError(path, "bad ELF
//   header");
#pragma once

#include <libelf.h>

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/unique_fd.h"

namespace incise::objfile {

class ElfFile {
 public:
  // An Error names the path: it does not open, or it is not an ELF file.
  static Result<ElfFile> open(const std::string& path);
  // An image already in memory (fuzzing, tests, files read by another
  // layer), copied: libelf wants a mutable buffer. `path` names it in errors.
  static Result<ElfFile> fromImage(std::string_view image, const std::string& path);

  Elf* elf() const { return elf_.get(); }

 private:
  struct ElfEnd {
    void operator()(Elf* elf) const { elf_end(elf); }
  };
  ElfFile() = default;

  // libelf reads them lazily: they live as long as the handle (declared
  // first, so destroyed after it).
  UniqueFd fd_;
  std::unique_ptr<std::string> image_;
  std::unique_ptr<Elf, ElfEnd> elf_;
};

// libelf's versions agree (checked once).
bool libelfReady();
// "PATH: WHAT: libelf's message".
Error libelfError(const std::string& path, const std::string& what);

}  // namespace incise::objfile
