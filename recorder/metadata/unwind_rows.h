// The in-kernel unwinder's rows of one object (bpf/unwind_table.h), from its
// .eh_frame (objfile/cfi_rows.h), and where they stop fitting: a rule whose
// offsets the 8-byte row cannot hold is marked unsupported (the walk ends there).
//
//   Result<ObjectUnwindRows> object = readObjectUnwindRows("/proc/123/root/usr/bin/python3.11");
//   std::optional<uint64_t> bias = objfile::loadBias(object->load_segments, start, end, offset);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "bpf/unwind_table.h"
#include "format/metadata.h"
#include "objfile/cfi_rows.h"

namespace incise::recorder {

struct ObjectUnwindRows {
  std::vector<unwind_row> rows;                // sorted by address
  std::vector<format::Segment> load_segments;  // to compute a mapping's load bias
  uint64_t fdes = 0;
  uint64_t unsupported_rows = 0;  // walks end there (longjmp, hand-written asm)
};

// The rows of an ELF file (any path the recorder can open). An object with
// no .eh_frame is OK with no rows (its frames are walked by frame pointer).
Result<ObjectUnwindRows> readObjectUnwindRows(const std::string& path);
// Same, from an image in memory (the vDSO); `name` names it in errors.
Result<ObjectUnwindRows> unwindRowsFromImage(std::string_view image, const std::string& name);

// An object's block in the shared rows array (bpf/unwind_table.h): the page
// index, then the rows. `rows` is sorted and not empty. The layout comes
// first, so that the block can be filled where it goes (the rows array's
// window) without a copy in between.
struct UnwindBlockLayout {
  uint64_t page_base = 0;       // ELF address of the index's page 0
  uint32_t pages = 0;           // the index has an entry per page
  uint32_t index_elements = 0;  // slots before the first row
  size_t elements = 0;          // index and rows
};
UnwindBlockLayout unwindBlockLayout(std::span<const unwind_row> rows);
// Writes layout.elements slots at `out`.
void fillUnwindBlock(std::span<const unwind_row> rows, const UnwindBlockLayout& layout,
                     unwind_row_slot* out);

struct UnwindBlock {
  std::vector<unwind_row_slot> slots;
  uint64_t page_base = 0;
  uint32_t pages = 0;
  uint32_t index_elements = 0;
};
UnwindBlock unwindBlock(const std::vector<unwind_row>& rows);

// One row in the BPF format (exposed for tests).
unwind_row encodeUnwindRow(const objfile::CfiRow& row);

}  // namespace incise::recorder
