#include "recorder/metadata/elf_symbol_count.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.h"

namespace incise::recorder {

Result<ElfSymbolCount> countElfSymbols(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error("libelf: version mismatch");
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::fromErrno(errno, "cannot open " + path);
  Elf* elf = elf_begin(fd.get(), ELF_C_READ, nullptr);
  if (elf == nullptr) return Error(path + ": not an ELF file");
  size_t symtab = 0, dynsym = 0;
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr;
       section = elf_nextscn(elf, section)) {
    GElf_Shdr header;
    // A debug file keeps .dynsym's header but not its data (SHT_NOBITS).
    if (gelf_getshdr(section, &header) == nullptr || header.sh_entsize == 0 ||
        header.sh_type == SHT_NOBITS)
      continue;
    if (header.sh_type == SHT_SYMTAB) symtab = header.sh_size / header.sh_entsize;
    if (header.sh_type == SHT_DYNSYM) dynsym = header.sh_size / header.sh_entsize;
  }
  elf_end(elf);
  if (symtab != 0) return ElfSymbolCount{.symbols = symtab, .full = true};
  return ElfSymbolCount{.symbols = dynsym, .full = false};
}

}  // namespace incise::recorder
