#include "objfile/elf_reader.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "objfile/elf_file.h"

namespace incise::objfile {
namespace {

enum class Want { kEverything, kIdentity, kBuildIdOnly };

// The data of a section, or null when it has none in the file (SHT_NOBITS,
// as .dynsym and .text are in a separate debug file).
Elf_Data* sectionData(Elf_Scn* section, const GElf_Shdr& header) {
  if (header.sh_type == SHT_NOBITS) return nullptr;
  Elf_Data* data = elf_getdata(section, nullptr);
  if (data == nullptr || data->d_buf == nullptr || data->d_size == 0) return nullptr;
  return data;
}

std::optional<std::string> findBuildIdNote(Elf_Data* notes) {
  const auto* bytes = static_cast<const char*>(notes->d_buf);
  size_t offset = 0;
  while (offset < notes->d_size) {
    GElf_Nhdr header;
    size_t name_offset = 0;
    size_t desc_offset = 0;
    const size_t next = gelf_getnote(notes, offset, &header, &name_offset, &desc_offset);
    if (next == 0 || next <= offset) break;
    const bool is_gnu = header.n_namesz == 4 && name_offset + 4 <= notes->d_size &&
                        std::memcmp(bytes + name_offset, "GNU", 4) == 0;
    if (is_gnu && header.n_type == NT_GNU_BUILD_ID && header.n_descsz > 0 &&
        desc_offset <= notes->d_size && header.n_descsz <= notes->d_size - desc_offset) {
      return std::string(bytes + desc_offset, header.n_descsz);
    }
    offset = next;
  }
  return std::nullopt;
}

// .gnu_debuglink: a NUL-terminated file name, padding, then a CRC32.
std::string debugLinkName(Elf_Data* data) {
  const auto* bytes = static_cast<const char*>(data->d_buf);
  const auto* end = static_cast<const char*>(std::memchr(bytes, '\0', data->d_size));
  if (end == nullptr) return {};
  return std::string(bytes, end);
}

bool keepSymbol(const GElf_Sym& symbol) {
  if (symbol.st_shndx == SHN_UNDEF || symbol.st_value == 0) return false;
  switch (GELF_ST_TYPE(symbol.st_info)) {
    case STT_FUNC:
    case STT_GNU_IFUNC:
      return true;
    case STT_OBJECT:
      return symbol.st_size > 0;
    default:
      return false;
  }
}

void readSymbols(Elf* elf, Elf_Scn* section, const GElf_Shdr& header,
                 std::vector<format::Symbol>& out) {
  Elf_Data* data = sectionData(section, header);
  if (data == nullptr) return;
  const size_t entry_size = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
  if (entry_size == 0) return;
  const size_t count = data->d_size / entry_size;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym symbol;
    if (gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr) break;
    if (!keepSymbol(symbol)) continue;
    const char* name = elf_strptr(elf, header.sh_link, symbol.st_name);
    if (name == nullptr || *name == '\0') continue;
    out.push_back({symbol.st_value, symbol.st_size, name});
  }
}

Result<ElfObject> readFromElf(Elf* elf, const std::string& path, Want want) {
  if (elf_kind(elf) != ELF_K_ELF) return Error(path + ": not an ELF file");
  GElf_Ehdr elf_header;
  if (gelf_getehdr(elf, &elf_header) == nullptr) return libelfError(path, "bad ELF header");

  ElfObject result;
  format::ObjectSymbols& object = result.object;
  object.path = path;
  object.elf_type = elf_header.e_type;

  size_t program_header_count = 0;
  if (elf_getphdrnum(elf, &program_header_count) != 0) program_header_count = 0;
  std::vector<GElf_Phdr> note_segments;
  for (size_t i = 0; i < program_header_count; ++i) {
    GElf_Phdr program_header;
    if (gelf_getphdr(elf, static_cast<int>(i), &program_header) == nullptr) continue;
    if (program_header.p_type == PT_LOAD) {
      object.segments.push_back({program_header.p_vaddr, program_header.p_offset,
                                 program_header.p_filesz, program_header.p_memsz,
                                 program_header.p_flags});
    } else if (program_header.p_type == PT_NOTE) {
      note_segments.push_back(program_header);
    }
  }

  size_t section_names = 0;
  const bool have_section_names = elf_getshdrstrndx(elf, &section_names) == 0;
  Elf_Scn* symtab = nullptr;
  Elf_Scn* dynsym = nullptr;
  GElf_Shdr symtab_header{};
  GElf_Shdr dynsym_header{};
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr;
       section = elf_nextscn(elf, section)) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr) continue;
    if (header.sh_type == SHT_NOTE && object.build_id.empty()) {
      if (Elf_Data* data = sectionData(section, header)) {
        object.build_id = findBuildIdNote(data).value_or("");
      }
    }
    if (want == Want::kBuildIdOnly) continue;
    if (want == Want::kIdentity && header.sh_type != SHT_PROGBITS) continue;
    if (header.sh_type == SHT_SYMTAB && sectionData(section, header) != nullptr) {
      symtab = section;
      symtab_header = header;
    } else if (header.sh_type == SHT_DYNSYM && sectionData(section, header) != nullptr) {
      dynsym = section;
      dynsym_header = header;
    } else if (have_section_names && header.sh_type == SHT_PROGBITS) {
      const char* name = elf_strptr(elf, section_names, header.sh_name);
      if (name != nullptr && std::strcmp(name, ".gnu_debuglink") == 0) {
        if (Elf_Data* data = sectionData(section, header)) object.debug_link = debugLinkName(data);
      }
    }
  }

  // Files without section headers (some stripped loaders) keep the note in a
  // PT_NOTE segment only.
  for (const GElf_Phdr& segment : note_segments) {
    if (!object.build_id.empty()) break;
    const Elf_Type note_type = segment.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;
    Elf_Data* data = elf_getdata_rawchunk(elf, static_cast<int64_t>(segment.p_offset),
                                          segment.p_filesz, note_type);
    if (data != nullptr && data->d_buf != nullptr) {
      object.build_id = findBuildIdNote(data).value_or("");
    }
  }

  if (want == Want::kEverything) {
    if (symtab != nullptr) {
      readSymbols(elf, symtab, symtab_header, object.symbols);
      result.table = SymbolTableKind::kFull;
    } else if (dynsym != nullptr) {
      readSymbols(elf, dynsym, dynsym_header, object.symbols);
      result.table = SymbolTableKind::kDynamic;
    }
    std::sort(object.symbols.begin(), object.symbols.end(),
              [](const format::Symbol& a, const format::Symbol& b) {
                return std::tie(a.address, a.name) < std::tie(b.address, b.name);
              });
  }
  return result;
}

Result<ElfObject> readFile(const std::string& path, Want want) {
  INCISE_ASSIGN_OR_RETURN(ElfFile file, ElfFile::open(path));
  return readFromElf(file.elf(), path, want);
}

}  // namespace

Result<ElfObject> readElf(const std::string& path) {
  return readFile(path, Want::kEverything);
}

Result<format::ObjectSymbols> readElfObject(const std::string& path) {
  INCISE_ASSIGN_OR_RETURN(ElfObject read, readFile(path, Want::kEverything));
  return std::move(read.object);
}

Result<format::ObjectSymbols> readElfImage(std::string_view image, const std::string& path) {
  INCISE_ASSIGN_OR_RETURN(ElfFile file, ElfFile::fromImage(image, path));
  INCISE_ASSIGN_OR_RETURN(ElfObject read, readFromElf(file.elf(), path, Want::kEverything));
  return std::move(read.object);
}

Result<ElfIdentity> readElfIdentity(const std::string& path) {
  INCISE_ASSIGN_OR_RETURN(ElfObject read, readFile(path, Want::kIdentity));
  return ElfIdentity{std::move(read.object.build_id), std::move(read.object.debug_link)};
}

Result<std::string> readBuildId(const std::string& path) {
  INCISE_ASSIGN_OR_RETURN(ElfObject read, readFile(path, Want::kBuildIdOnly));
  if (read.object.build_id.empty()) return Error(path + ": no GNU build-id note");
  return std::move(read.object.build_id);
}

}  // namespace incise::objfile
