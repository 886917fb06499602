// Reads the call-frame information sections of one ELF file: .eh_frame and
// .eh_frame_hdr (what the loader and C++ exceptions use; every x86-64 object
// built by gcc/clang has them) and .debug_frame (the DWARF debug copy, found
// in objects built without unwind tables and in separate debug files), as
// raw bytes with their virtual addresses, and the loadable segments (to turn
// a mapped address into the ELF address the tables use). Shared by the
// recorder, which embeds the tables of every object a -g dwarf/hybrid sample
// hit and builds the in-kernel unwinder's rows from them, and by tests of the
// offline unwinder, which build the same tables without it.
//
// The file is distrusted: libelf bounds the section headers and data; a
// section larger than kMaxUnwindSectionBytes is skipped, not copied.
//
//   Result<objfile::UnwindTables> tables = objfile::readUnwindTables("/usr/lib/libc.so.6");
//   if (!tables) return tables.error();        // "/x: not an ELF file"
//   objfile::embedUnwindTables(*tables, object);  // ObjectSymbols.eh_frame*
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "format/metadata.h"

namespace incise::objfile {

// .eh_frame of a large binary (node: a few MB) is the biggest section copied.
inline constexpr size_t kMaxUnwindSectionBytes = 64u << 20;

struct UnwindSection {
  std::string bytes;  // empty: the file has no such section (or it was too big)
  uint64_t vaddr = 0;
};

struct UnwindTables {
  UnwindSection eh_frame;
  UnwindSection eh_frame_hdr;
  UnwindSection debug_frame;                   // not loaded: vaddr is 0
  std::vector<format::Segment> load_segments;  // PT_LOAD program headers, in file order

  bool empty() const {
    return eh_frame.bytes.empty() && eh_frame_hdr.bytes.empty() && debug_frame.bytes.empty();
  }
};

// An Error when the file cannot be opened or is not ELF; OK with empty
// sections when it has none.
Result<UnwindTables> readUnwindTables(const std::string& path);

// Same, from an ELF image in memory; `path` names it in errors.
Result<UnwindTables> readUnwindTablesFromImage(std::string_view image, const std::string& path);

// Copies .eh_frame and .eh_frame_hdr into the object's trace fields (the
// format has no .debug_frame field: an object with only .debug_frame is
// unwound by frame pointer).
void embedUnwindTables(UnwindTables tables, format::ObjectSymbols& object);

// The load bias (address - ELF virtual address) of a mapping of this file
// at [mapping_start, mapping_end) from file offset `mapping_offset`: from
// the PT_LOAD segment whose file bytes it maps (mappings are page-aligned,
// segments need not be). nullopt when the mapping maps none.
std::optional<uint64_t> loadBias(const std::vector<format::Segment>& load_segments,
                                 uint64_t mapping_start, uint64_t mapping_end,
                                 uint64_t mapping_offset);

}  // namespace incise::objfile
