// Fuzz entry for objfile::buildCfiRows: the unwind rows of an .eh_frame.
// Input: the section's virtual address (8 bytes, little-endian), then the
// section's bytes.
#include <cstring>
#include <string_view>

#include "fuzz/fuzz_entries.h"
#include "objfile/cfi_rows.h"

namespace incise::fuzz {

int fuzzEhFrame(const uint8_t* data, size_t size) {
  uint64_t vaddr = 0;
  if (size < sizeof(vaddr)) return 0;
  std::memcpy(&vaddr, data, sizeof(vaddr));
  std::string_view section(reinterpret_cast<const char*>(data) + sizeof(vaddr),
                           size - sizeof(vaddr));
  Result<objfile::CfiRows> rows = objfile::buildCfiRows(section, vaddr);
  if (!rows) return 0;
  // The rows must come out sorted, one rule per address.
  for (size_t i = 1; i < rows->rows.size(); ++i) {
    if (rows->rows[i - 1].address >= rows->rows[i].address) __builtin_trap();
  }
  return 0;
}

}  // namespace incise::fuzz
