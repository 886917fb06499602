// The function ranges an .eh_frame section describes: one [start, end) per
// FDE, in ELF virtual addresses. A function with no symbol (a static
// function of a stripped object) still has its FDE, because the loader and
// C++ exceptions need it, so its range names the function's extent even
// when nothing names the function: the symbolizer groups such addresses by
// it ("libc.so.6!fn_3fb20"), and the recorder embeds the ranges its frames
// hit.
//
// Only the CIE/FDE headers are read (length, CIE pointer, the CIE's 'z'
// augmentation and pointer encoding, the FDE's initial location and
// range); the call-frame instructions are skipped. The bytes are
// distrusted: every length and pointer is bounds-checked, and a malformed
// entry ends the walk with the ranges found before it.
//
//   Result<objfile::UnwindTables> tables = objfile::readUnwindTables(path);
//   std::vector<objfile::FunctionRange> ranges =
//       objfile::readFdeRanges(tables->eh_frame.bytes, tables->eh_frame.vaddr);
//   if (const FunctionRange* hit = objfile::findFunctionRange(ranges, vaddr)) use(hit->start);
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace incise::objfile {

struct FunctionRange {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  bool operator==(const FunctionRange&) const = default;
};

// Every FDE's range of `eh_frame`, loaded at `vaddr`: sorted by start, empty
// ranges dropped, each start once (the longest range kept).
std::vector<FunctionRange> readFdeRanges(std::string_view eh_frame, uint64_t vaddr);

// The range of `sorted` holding `address`; null when none does.
const FunctionRange* findFunctionRange(const std::vector<FunctionRange>& sorted, uint64_t address);

}  // namespace incise::objfile
