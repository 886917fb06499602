#include "recorder/elf_symbol_count.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace incise::recorder {

Result<size_t> countElfSymbols(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error("libelf: version mismatch");
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error("cannot open " + path + ": " + std::strerror(errno));
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf == nullptr) {
    close(fd);
    return Error(path + ": not an ELF file");
  }
  size_t symtab = 0, dynsym = 0;
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr;
       section = elf_nextscn(elf, section)) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr || header.sh_entsize == 0) continue;
    if (header.sh_type == SHT_SYMTAB) symtab = header.sh_size / header.sh_entsize;
    if (header.sh_type == SHT_DYNSYM) dynsym = header.sh_size / header.sh_entsize;
  }
  elf_end(elf);
  close(fd);
  return symtab != 0 ? symtab : dynsym;
}

}  // namespace incise::recorder
