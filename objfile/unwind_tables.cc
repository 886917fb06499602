// Call-frame information sections of an ELF file: see unwind_tables.h.
#include "objfile/unwind_tables.h"

#include <gelf.h>

#include <cstring>

#include "objfile/elf_file.h"

namespace incise::objfile {
namespace {

Result<UnwindTables> readSections(Elf* elf, const std::string& path) {
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) return Error(path + ": not an ELF file");
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return Error(path + ": no section names");
  UnwindTables tables;
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr;
       section = elf_nextscn(elf, section)) {
    GElf_Shdr header{};
    if (gelf_getshdr(section, &header) == nullptr || header.sh_type == SHT_NOBITS) continue;
    const char* name = elf_strptr(elf, names, header.sh_name);
    if (name == nullptr) continue;
    UnwindSection* target = std::strcmp(name, ".eh_frame") == 0       ? &tables.eh_frame
                            : std::strcmp(name, ".eh_frame_hdr") == 0 ? &tables.eh_frame_hdr
                            : std::strcmp(name, ".debug_frame") == 0  ? &tables.debug_frame
                                                                      : nullptr;
    if (target == nullptr) continue;
    // Raw bytes: CFI is decoded by its reader (libdw), and a compressed
    // .debug_frame (SHF_COMPRESSED) is left out rather than inflated here.
    if ((header.sh_flags & SHF_COMPRESSED) != 0) continue;
    Elf_Data* data = elf_rawdata(section, nullptr);
    if (data == nullptr || data->d_buf == nullptr || data->d_size > kMaxUnwindSectionBytes)
      continue;
    target->bytes.assign(static_cast<const char*>(data->d_buf), data->d_size);
    target->vaddr = header.sh_addr;
  }
  size_t program_headers = 0;
  if (elf_getphdrnum(elf, &program_headers) == 0) {
    for (size_t i = 0; i < program_headers; ++i) {
      GElf_Phdr phdr{};
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD)
        continue;
      tables.load_segments.push_back(format::Segment{.vaddr = phdr.p_vaddr,
                                                     .file_offset = phdr.p_offset,
                                                     .file_size = phdr.p_filesz,
                                                     .mem_size = phdr.p_memsz,
                                                     .flags = phdr.p_flags});
    }
  }
  return tables;
}

}  // namespace

Result<UnwindTables> readUnwindTables(const std::string& path) {
  INCISE_ASSIGN_OR_RETURN(ElfFile file, ElfFile::open(path));
  return readSections(file.elf(), path);
}

Result<UnwindTables> readUnwindTablesFromImage(std::string_view image, const std::string& path) {
  INCISE_ASSIGN_OR_RETURN(ElfFile file, ElfFile::fromImage(image, path));
  return readSections(file.elf(), path);
}

void embedUnwindTables(UnwindTables tables, format::ObjectSymbols& object) {
  if (!tables.eh_frame.bytes.empty()) {
    object.eh_frame = std::move(tables.eh_frame.bytes);
    object.eh_frame_vaddr = tables.eh_frame.vaddr;
  }
  if (!tables.eh_frame_hdr.bytes.empty()) {
    object.eh_frame_hdr = std::move(tables.eh_frame_hdr.bytes);
    object.eh_frame_hdr_vaddr = tables.eh_frame_hdr.vaddr;
  }
}

std::optional<uint64_t> loadBias(const std::vector<format::Segment>& load_segments,
                                 uint64_t mapping_start, uint64_t mapping_end,
                                 uint64_t mapping_offset) {
  if (mapping_end <= mapping_start) return std::nullopt;
  uint64_t file_end = mapping_offset + (mapping_end - mapping_start);
  // The executable segment first: an old-style mapping may also cover headers.
  for (bool executable_only : {true, false}) {
    for (const format::Segment& segment : load_segments) {
      uint64_t segment_end = segment.file_offset + segment.file_size;
      if (segment.file_size == 0 || segment.file_offset >= file_end ||
          segment_end <= mapping_offset || (executable_only && !(segment.flags & PF_X)))
        continue;
      // address = mapping_start + (file offset - mapping_offset); vaddr =
      // segment.vaddr + (file offset - segment.file_offset).
      return mapping_start - mapping_offset + segment.file_offset - segment.vaddr;
    }
  }
  return std::nullopt;
}

}  // namespace incise::objfile
