// The in-kernel unwinder's rows: see unwind_rows.h.
#include "recorder/metadata/unwind_rows.h"

#include <cstring>
#include <limits>

#include "objfile/unwind_tables.h"

namespace incise::recorder {
namespace {

uint8_t cfaKind(objfile::CfaRule rule) {
  switch (rule) {
    case objfile::CfaRule::kNone:
      return UNWIND_CFA_NONE;
    case objfile::CfaRule::kRspOffset:
      return UNWIND_CFA_RSP;
    case objfile::CfaRule::kRbpOffset:
      return UNWIND_CFA_RBP;
    case objfile::CfaRule::kDerefRsp:
      return UNWIND_CFA_DEREF_RSP;
    case objfile::CfaRule::kDerefRbp:
      return UNWIND_CFA_DEREF_RBP;
    case objfile::CfaRule::kPlt:
      return UNWIND_CFA_PLT;
    case objfile::CfaRule::kSignalFrame:
      return UNWIND_CFA_SIGNAL;
    case objfile::CfaRule::kOutermost:
      return UNWIND_CFA_OUTERMOST;
    case objfile::CfaRule::kUnsupported:
      return UNWIND_CFA_UNSUPPORTED;
  }
  return UNWIND_CFA_UNSUPPORTED;
}

// The rbp byte: base in bits 7-6, offset / 8 in a signed 6-bit field.
uint8_t rbpField(const objfile::CfiRow& row) {
  uint8_t base;
  switch (row.rbp) {
    case objfile::RbpRule::kUnchanged:
      return UNWIND_RBP_UNCHANGED;
    case objfile::RbpRule::kAtCfa:
      base = UNWIND_RBP_AT_CFA;
      break;
    case objfile::RbpRule::kAtRbp:
      base = UNWIND_RBP_AT_RBP;
      break;
    case objfile::RbpRule::kUnknown:
    default:
      return UNWIND_RBP_UNKNOWN;
  }
  if (row.rbp_offset % 8 != 0) return UNWIND_RBP_UNKNOWN;
  int64_t words = row.rbp_offset / 8;
  if (words < -32 || words > 31) return UNWIND_RBP_UNKNOWN;
  return static_cast<uint8_t>(base | (static_cast<uint8_t>(words) & UNWIND_RBP_OFFSET_MASK));
}

Result<ObjectUnwindRows> fromTables(Result<objfile::UnwindTables> tables, const std::string& name) {
  if (!tables) return tables.error();
  ObjectUnwindRows out;
  out.load_segments = std::move(tables->load_segments);
  // No call-frame information (data-only libraries such as libicudata).
  if (tables->eh_frame.bytes.size() < 8) return out;
  Result<objfile::CfiRows> cfi =
      objfile::buildCfiRows(tables->eh_frame.bytes, tables->eh_frame.vaddr);
  if (!cfi) return cfi.error().context(name);
  out.fdes = cfi->stats.fdes;
  out.rows.reserve(cfi->rows.size());
  for (const objfile::CfiRow& row : cfi->rows) {
    // Rows hold 32-bit addresses: objects above 4 GiB (none seen) keep the low part's rows.
    if (row.address > std::numeric_limits<uint32_t>::max()) break;
    unwind_row encoded = encodeUnwindRow(row);
    if ((encoded.cfa & ~UNWIND_CFA_SCALED) == UNWIND_CFA_UNSUPPORTED) ++out.unsupported_rows;
    out.rows.push_back(encoded);
  }
  return out;
}

}  // namespace

UnwindBlockLayout unwindBlockLayout(std::span<const unwind_row> rows) {
  constexpr uint64_t kPage = UNWIND_INDEX_PAGE_BYTES;
  UnwindBlockLayout layout;
  layout.page_base = rows.front().address & ~(kPage - 1);
  layout.pages = static_cast<uint32_t>((rows.back().address - layout.page_base) / kPage + 1);
  layout.index_elements = layout.pages;
  layout.elements = size_t{layout.index_elements} + rows.size();
  return layout;
}

void fillUnwindBlock(std::span<const unwind_row> rows, const UnwindBlockLayout& layout,
                     unwind_row_slot* out) {
  constexpr uint64_t kPage = UNWIND_INDEX_PAGE_BYTES;
  size_t covering = 0;  // rows[covering]: the last row at or before the page's start
  for (size_t page = 0; page <= layout.pages; ++page) {
    uint64_t start = layout.page_base + page * kPage;
    while (covering + 1 < rows.size() && rows[covering + 1].address <= start) ++covering;
    // Page p's slot holds where p's rows start and where p + 1's do.
    if (page < layout.pages) out[page].page_rows[0] = static_cast<uint32_t>(covering);
    if (page > 0) out[page - 1].page_rows[1] = static_cast<uint32_t>(covering);
  }
  static_assert(sizeof(unwind_row) == sizeof(unwind_row_slot));
  std::memcpy(out + layout.index_elements, rows.data(), rows.size() * sizeof(unwind_row));
}

UnwindBlock unwindBlock(const std::vector<unwind_row>& rows) {
  UnwindBlockLayout layout = unwindBlockLayout(rows);
  UnwindBlock block{.page_base = layout.page_base,
                    .pages = layout.pages,
                    .index_elements = layout.index_elements};
  block.slots.resize(layout.elements);
  fillUnwindBlock(rows, layout, block.slots.data());
  return block;
}

unwind_row encodeUnwindRow(const objfile::CfiRow& row) {
  unwind_row out{};
  out.address = static_cast<uint32_t>(row.address);
  out.cfa = cfaKind(row.cfa);
  out.rbp = rbpField(row);
  int64_t offset = row.offset;
  if (offset >= std::numeric_limits<int16_t>::min() &&
      offset <= std::numeric_limits<int16_t>::max()) {
    out.offset = static_cast<int16_t>(offset);
  } else if (offset % 8 == 0 && offset / 8 >= std::numeric_limits<int16_t>::min() &&
             offset / 8 <= std::numeric_limits<int16_t>::max()) {
    out.cfa |= UNWIND_CFA_SCALED;  // a frame over 32 KiB
    out.offset = static_cast<int16_t>(offset / 8);
  } else {
    out.cfa = UNWIND_CFA_UNSUPPORTED;
    out.rbp = UNWIND_RBP_UNKNOWN;
    out.offset = 0;
  }
  return out;
}

Result<ObjectUnwindRows> readObjectUnwindRows(const std::string& path) {
  return fromTables(objfile::readUnwindTables(path), path);
}

Result<ObjectUnwindRows> unwindRowsFromImage(std::string_view image, const std::string& name) {
  return fromTables(objfile::readUnwindTablesFromImage(image, name), name);
}

}  // namespace incise::recorder
