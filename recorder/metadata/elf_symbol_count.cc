#include "recorder/metadata/elf_symbol_count.h"

#include <gelf.h>

#include "objfile/elf_file.h"

namespace incise::recorder {

Result<ElfSymbolCount> countElfSymbols(const std::string& path) {
  INCISE_ASSIGN_OR_RETURN(objfile::ElfFile file, objfile::ElfFile::open(path));
  Elf* elf = file.elf();
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
  if (symtab != 0) return ElfSymbolCount{.symbols = symtab, .full = true};
  return ElfSymbolCount{.symbols = dynsym, .full = false};
}

}  // namespace incise::recorder
