// Thread-local variables found by name: see tls_variable.h.
#include "objfile/tls_variable.h"

#include <elf.h>
#include <gelf.h>

#include <optional>

#include "objfile/elf_file.h"

namespace incise::objfile {
namespace {

const char* symbolTypeName(unsigned type) {
  switch (type) {
    case STT_FUNC:
    case STT_GNU_IFUNC:
      return "a function";
    case STT_OBJECT:
      return "a global variable, not a thread-local one";
    case STT_SECTION:
      return "a section";
    default:
      return "not a variable";
  }
}

// A definition of `name` in the table, else a reference to it (undefined).
std::optional<GElf_Sym> findInTable(Elf* elf, Elf_Scn* section, const GElf_Shdr& header,
                                    std::string_view name) {
  if (header.sh_type == SHT_NOBITS) return std::nullopt;
  Elf_Data* data = elf_getdata(section, nullptr);
  const size_t entry_size = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
  if (data == nullptr || data->d_buf == nullptr || entry_size == 0) return std::nullopt;
  std::optional<GElf_Sym> undefined;
  for (size_t i = 0; i < data->d_size / entry_size; ++i) {
    GElf_Sym symbol;
    if (gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr) break;
    const char* symbol_name = elf_strptr(elf, header.sh_link, symbol.st_name);
    if (symbol_name == nullptr || name != symbol_name) continue;
    if (symbol.st_shndx != SHN_UNDEF) return symbol;
    undefined = symbol;
  }
  return undefined;
}

}  // namespace

uint64_t TlsVariable::executableBlockOffset() const {
  // The loader puts the block so that its address is congruent to p_vaddr
  // modulo the alignment, below the thread pointer, rounded to the alignment.
  const uint64_t align = block_align == 0 ? 1 : block_align;
  const uint64_t firstbyte = (0 - (block_vaddr & (align - 1))) & (align - 1);
  const uint64_t rounded = (block_size - firstbyte + align - 1) / align * align;
  return rounded + firstbyte;
}

Result<TlsVariable> findTlsVariable(const std::string& path, std::string_view name) {
  INCISE_ASSIGN_OR_RETURN(ElfFile file, ElfFile::open(path));
  Elf* elf = file.elf();
  if (elf_kind(elf) != ELF_K_ELF) return Error(path + ": not an ELF file");
  const std::string quoted = "'" + std::string(name) + "'";

  std::optional<GElf_Phdr> tls_segment;
  size_t program_headers = 0;
  if (elf_getphdrnum(elf, &program_headers) != 0) program_headers = 0;
  for (size_t i = 0; i < program_headers; ++i) {
    GElf_Phdr header;
    if (gelf_getphdr(elf, static_cast<int>(i), &header) != nullptr && header.p_type == PT_TLS)
      tls_segment = header;
  }

  // .symtab first (it has every symbol), then .dynsym (a stripped file).
  std::optional<GElf_Sym> found;
  for (int pass = 0; pass < 2 && !(found && found->st_shndx != SHN_UNDEF); ++pass) {
    const unsigned wanted = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
    for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr;
         section = elf_nextscn(elf, section)) {
      GElf_Shdr header;
      if (gelf_getshdr(section, &header) == nullptr || header.sh_type != wanted) continue;
      if (std::optional<GElf_Sym> in_table = findInTable(elf, section, header, name)) {
        if (!found || found->st_shndx == SHN_UNDEF) found = in_table;
      }
    }
  }
  if (!found) return Error(quoted + " is not a symbol of " + path);
  const GElf_Sym& symbol = *found;
  // A reference to another object's variable is not this object's.
  if (symbol.st_shndx == SHN_UNDEF)
    return Error(quoted + " is not defined in " + path +
                 " (it refers to another object's; name that object: OBJECT:SYMBOL)");
  const unsigned type = GELF_ST_TYPE(symbol.st_info);
  if (type != STT_TLS)
    return Error(quoted + " in " + path + " is " + symbolTypeName(type) +
                 " (a context value is a thread_local variable)");
  if (!tls_segment) return Error(path + " has thread-local " + quoted + " but no TLS segment");
  const uint64_t align = tls_segment->p_align == 0 ? 1 : tls_segment->p_align;
  if ((align & (align - 1)) != 0 || align > kMaxTlsAlign)
    return Error(path + ": its TLS segment's alignment " + std::to_string(align) +
                 " is not a power of two up to " + std::to_string(kMaxTlsAlign));
  const uint64_t block_size = tls_segment->p_memsz;
  if (symbol.st_value > block_size || symbol.st_size > block_size - symbol.st_value)
    return Error(quoted + " in " + path + " lies past its TLS block (" +
                 std::to_string(symbol.st_value) + " + " + std::to_string(symbol.st_size) +
                 " bytes of " + std::to_string(block_size) + ")");
  return TlsVariable{.offset = symbol.st_value,
                     .size = symbol.st_size,
                     .block_size = block_size,
                     .block_align = align,
                     .block_vaddr = tls_segment->p_vaddr};
}

}  // namespace incise::objfile
